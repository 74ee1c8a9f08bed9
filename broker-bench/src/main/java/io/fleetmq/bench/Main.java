package io.fleetmq.bench;

import io.fleetmq.bench.cli.BenchOptions;
import io.fleetmq.bench.cli.OptionsParser;
import io.fleetmq.bench.cli.UsageException;
import io.fleetmq.bench.connect.ConnectRun;
import io.fleetmq.bench.fleet.IdleRun;
import io.fleetmq.bench.fleet.StormRun;
import io.fleetmq.bench.probe.FileLimit;
import io.fleetmq.bench.report.BenchReport;
import io.fleetmq.bench.report.ConnectReport;
import io.fleetmq.bench.report.ConnectReportTable;
import io.fleetmq.bench.report.IdleReport;
import io.fleetmq.bench.report.IdleReportTable;
import io.fleetmq.bench.report.JsonReport;
import io.fleetmq.bench.report.ReportTable;
import io.fleetmq.bench.report.StormReport;
import io.fleetmq.bench.report.StormReportTable;
import io.fleetmq.bench.run.BenchmarkRun;
import io.fleetmq.bench.scenario.Scenario;
import java.io.PrintStream;
import java.util.Optional;

/** {@code java -jar fleetmq-bench.jar --scenario fan-in --qos 1 --duration 30s}; see {@link OptionsParser#USAGE}. */
public final class Main {

    static final int EXIT_OK = 0;
    static final int EXIT_ERRORS = 1;
    static final int EXIT_USAGE = 2;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length > 0 && args[0].equals("backlog")) {
            try {
                return io.fleetmq.bench.failover.Backlog.run(java.util.Arrays.copyOfRange(args, 1, args.length), out, err);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return EXIT_ERRORS;
            }
        }
        if (args.length > 0 && args[0].equals("failover")) {
            return io.fleetmq.bench.failover.Failover.run(java.util.Arrays.copyOfRange(args, 1, args.length), out, err);
        }
        Optional<BenchOptions> options;
        try {
            options = OptionsParser.parse(args);
        } catch (UsageException e) {
            err.println("fleetmq-bench: " + e.getMessage());
            err.println("Try --help.");
            return EXIT_USAGE;
        }
        if (options.isEmpty()) {
            out.print(OptionsParser.USAGE);
            return EXIT_OK;
        }
        if (options.get().scenario().holdsFleet()) {
            // Every connection is a descriptor: better to refuse now than to fail half-way with errors
            // that would look like the broker's.
            String problem = FileLimit.problem(FileLimit.current(), options.get().clients());
            if (problem != null) {
                err.println("fleetmq-bench: " + problem);
                return EXIT_USAGE;
            }
        }
        if (options.get().scenario() == Scenario.IDLE) {
            IdleReport report = new IdleRun(options.get(), err).run();
            out.print(IdleReportTable.render(report));
            out.println(IdleReportTable.json(report));
            out.flush();
            return report.clean() ? EXIT_OK : EXIT_ERRORS;
        }
        if (options.get().scenario() == Scenario.STORM) {
            StormReport report = new StormRun(options.get(), err).run();
            out.print(StormReportTable.render(report));
            out.println(StormReportTable.json(report));
            out.flush();
            return report.allBack() ? EXIT_OK : EXIT_ERRORS;
        }
        if (options.get().scenario() == Scenario.CONNECT) {
            ConnectReport report = new ConnectRun(options.get(), err).run();
            out.print(ConnectReportTable.render(report));
            out.println(ConnectReportTable.json(report));
            out.flush();
            return report.clean() ? EXIT_OK : EXIT_ERRORS;
        }
        BenchReport report = new BenchmarkRun(options.get(), err).run();
        out.print(ReportTable.render(report));
        out.println(JsonReport.line(report));
        out.flush();
        return report.clean() ? EXIT_OK : EXIT_ERRORS;
    }
}
