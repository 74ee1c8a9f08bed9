package io.fleetmq.bench.probe;

import io.fleetmq.bench.cli.ProbeOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * Samples the broker's memory from the outside: heap and direct memory from its Prometheus endpoint,
 * resident memory from {@code /proc}. Neither can ask for a garbage collection first, so heap figures
 * include garbage; read them as trends and as differences over thousands of connections, where the
 * noise divides away. A source that fails is reported once on the progress stream and then shows as
 * unknown; the run goes on.
 */
public final class BrokerProbe {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final URI metricsUrl;
    private final long pid;
    private final PrintStream progress;
    private final HttpClient http;
    private volatile String heapMetric;
    private volatile String directMetric;
    private boolean metricsWarned;
    private boolean heapWarned;
    private boolean directWarned;
    private boolean pidWarned;

    public BrokerProbe(ProbeOptions options, PrintStream progress) {
        this.metricsUrl = options.metricsUrl();
        this.pid = options.brokerPid();
        this.progress = progress;
        this.http = metricsUrl == null ? null : HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    }

    public boolean active() {
        return metricsUrl != null || pid > 0;
    }

    /** Blocks for at most a few seconds (one HTTP request); unknown values are {@link ResourceSample#UNKNOWN}. */
    public synchronized ResourceSample sample() {
        long heap = ResourceSample.UNKNOWN;
        long direct = ResourceSample.UNKNOWN;
        if (metricsUrl != null) {
            List<PrometheusText.Series> series = scrape();
            if (series != null) {
                PrometheusText.Reading h = PrometheusText.heap(series);
                PrometheusText.Reading d = PrometheusText.direct(series);
                if (h != null) {
                    heapMetric = h.metric();
                    heap = (long) h.value();
                } else if (!heapWarned) {
                    heapWarned = true;
                    progress.println("no heap series (jvm_memory..used..{area=\"heap\"}) at " + metricsUrl);
                }
                if (d != null) {
                    directMetric = d.metric();
                    direct = (long) d.value();
                } else if (!directWarned) {
                    directWarned = true;
                    progress.println("no direct-memory series (jvm_buffer..used..bytes{...=\"direct\"}) at " + metricsUrl);
                }
            }
        }
        long rss = ResourceSample.UNKNOWN;
        if (pid > 0) {
            rss = ProcStatus.rssBytes(pid);
            if (rss == ResourceSample.UNKNOWN && !pidWarned) {
                pidWarned = true;
                progress.println("cannot read /proc/" + pid + "/status: no such process, or not Linux");
            }
        }
        return new ResourceSample(heap, direct, rss);
    }

    private List<PrometheusText.Series> scrape() {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(metricsUrl).timeout(TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                warnMetrics("HTTP " + response.statusCode());
                return null;
            }
            return PrometheusText.parse(response.body());
        } catch (IOException e) {
            warnMetrics(e.toString());
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private void warnMetrics(String why) {
        if (!metricsWarned) {
            metricsWarned = true;
            progress.println("cannot read " + metricsUrl + ": " + why);
        }
    }

    /** Where each figure comes from, for the report: metric names as found, the PID. */
    public String sources() {
        StringBuilder s = new StringBuilder();
        if (metricsUrl != null) {
            s.append("heap ").append(heapMetric == null ? "(not found)" : heapMetric)
                    .append(", direct ").append(directMetric == null ? "(not found)" : directMetric)
                    .append(" from ").append(metricsUrl);
        }
        if (pid > 0) {
            s.append(s.length() == 0 ? "" : "; ").append("RSS of pid ").append(pid);
        }
        return s.toString();
    }
}
