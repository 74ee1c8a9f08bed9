package io.fleetmq.app.http;

import static io.fleetmq.app.http.ApiTestNode.body;
import static io.fleetmq.app.http.ApiTestNode.json;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import io.fleetmq.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in headless Chromium against one real node, with real MQTT clients: what an
 * operator does through it must reach the broker (a disconnect, a credential, a deleted retained
 * message, a message published from the page), and no page may log an error in the browser.
 * Screenshots of every page go to {@code target/console-screenshots} for review.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {

    private static final String PASSWORD = "console-Password-7";
    private static final Path CHROMIUM = Path.of(System.getProperty("fleetmq.chromium", "/usr/bin/chromium"));
    private static final Path CHROMEDRIVER = Path.of(System.getProperty("fleetmq.chromedriver", "/usr/bin/chromedriver"));
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dataDir;
    private ApiTestNode node;
    private String token;
    private WebDriver browser;
    private WebDriverWait wait;
    private String base;
    private final List<Mqtt5BlockingClient> clients = new ArrayList<>();
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    void start() throws IOException {
        assertTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "the console tests need Chromium at " + CHROMIUM + " and its driver at " + CHROMEDRIVER
                        + ": run .ci/install-test-packages (Debian: apt-get install chromium chromium-driver)");
        node = new ApiTestNode(dataDir, Map.of("ADMIN_PASSWORD", PASSWORD, "MQTT_ALLOW_ANONYMOUS", "true",
                "ADMIN_STATS_INTERVAL", "1s"));
        token = node.token("admin", PASSWORD);
        base = "http://127.0.0.1:" + node.port();
        Files.createDirectories(SCREENSHOTS);

        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--no-first-run", "--disable-extensions");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        wait = new WebDriverWait(browser, WAIT);
    }

    @AfterAll
    void stop() {
        for (Mqtt5BlockingClient c : clients) {
            if (c.getState().isConnected()) {
                c.disconnect();
            }
        }
        if (browser != null) {
            browser.quit();
        }
        if (node != null) {
            node.close();
        }
    }

    @Test
    @Order(1)
    void servesThePageWithoutTokenAndWithSecurityHeaders() {
        HttpResponse<String> page = node.get("/", null);
        assertEquals(200, page.statusCode());
        assertEquals("text/html;charset=utf-8", page.headers().firstValue("content-type").orElse("").replace(" ", ""));
        assertEquals("nosniff", page.headers().firstValue("x-content-type-options").orElse(""));
        String csp = page.headers().firstValue("content-security-policy").orElse("");
        int wsPort = node.broker().node().mqttPort("WebSocket");
        assertTrue(csp.contains("connect-src 'self' ws://127.0.0.1:" + wsPort + ";"), csp);
        assertTrue(csp.contains("script-src 'self';") && csp.contains("frame-ancestors 'none'"), csp);
        assertEquals("no-cache", page.headers().firstValue("cache-control").orElse(""));

        HttpResponse<String> lib = node.get("/webjars/uplot/1.6.30/dist/uPlot.iife.min.js", null);
        assertEquals(200, lib.statusCode());
        assertEquals("text/javascript;charset=utf-8", lib.headers().firstValue("content-type").orElse("").replace(" ", ""));
        assertTrue(lib.headers().firstValue("cache-control").orElse("").contains("immutable"));
        assertEquals(200, node.get("/webjars/paho-mqtt/1.1.0/paho-mqtt-min.js", null).statusCode());
        assertEquals(200, node.get("/console/app.js", null).statusCode());
        assertEquals(wsPort, body(node.get("/console/config.json", null)).path("wsPort").asInt());

        // The API still wants its token; nothing outside the console's files is served.
        assertEquals(401, node.get("/api/v1/credentials", null).statusCode());
        assertEquals(404, node.get("/console/..%2Fconsole%2Findex.html", null).statusCode());
        assertEquals(404, node.get("/webjars/../logback.xml", null).statusCode());
        assertEquals(404, node.get("/console/logback.xml", null).statusCode());
        assertEquals(404, node.get("/webjars/uplot/1.6.30/README.md", null).statusCode());
    }

    @Test
    @Order(2)
    void logsIn() {
        browser.get(base + "/");
        WebElement password = wait.until(ExpectedConditions.visibilityOfElementLocated(By.name("password")));
        screenshot("login");
        password.sendKeys(PASSWORD);
        browser.findElement(By.id("login")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("nav")));
        wait.until(d -> d.findElements(By.cssSelector("#nodes .card")).size() == 1);
        wait.until(d -> d.findElements(By.cssSelector(".uplot")).size() == 3);
        assertTrue(browser.findElement(By.id("nodes")).getText().contains("test-node"));
        // Samples every second: the connections chart fills within a few refreshes.
        wait.until(d -> d.findElements(By.cssSelector(".u-legend")).size() == 3);
        screenshot("dashboard");
        assertNoBrowserErrors("dashboard");
    }

    @Test
    @Order(3)
    void disconnectsAClientFromTheSessionsPage() {
        String clientId = "console-victim-" + run;
        AtomicReference<Throwable> disconnected = new AtomicReference<>();
        Mqtt5BlockingClient victim = Mqtt5Client.builder().identifier(clientId).serverHost("127.0.0.1")
                .serverPort(node.mqttPort()).addDisconnectedListener(ctx -> disconnected.compareAndSet(null, ctx.getCause()))
                .buildBlocking();
        victim.connect();
        clients.add(victim);
        // Another client with markup in its ID: it must show as text.
        Mqtt5BlockingClient markup = node.broker().connectedV5("console-<img src=x id=injected>-" + run);
        clients.add(markup);

        open("sessions", "Sessions");
        WebElement prefix = browser.findElement(By.name("clientIdPrefix"));
        prefix.sendKeys("console-");
        prefix.submit();
        By row = By.cssSelector("button[data-client-id='" + clientId + "']");
        wait.until(ExpectedConditions.elementToBeClickable(row));
        assertTrue(browser.findElements(By.id("injected")).isEmpty(), "a client ID is never parsed as HTML");
        assertTrue(browser.findElement(By.tagName("main")).getText().contains("console-<img src=x id=injected>-" + run));
        browser.findElement(row).click();
        WebElement disconnect = wait.until(ExpectedConditions.elementToBeClickable(By.id("session-disconnect")));
        screenshot("sessions");
        disconnect.click();
        wait.until(ExpectedConditions.textToBe(By.id("session-disconnect"), "Confirm disconnect"));
        browser.findElement(By.id("session-disconnect")).click();

        Await.until(WAIT, "the client is disconnected", () -> disconnected.get() != null);
        Mqtt5DisconnectException cause = (Mqtt5DisconnectException) disconnected.get();
        assertEquals(Mqtt5DisconnectReasonCode.ADMINISTRATIVE_ACTION, cause.getMqttMessage().getReasonCode());
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(".msg.ok"), "Disconnected " + clientId));
        assertNoBrowserErrors("sessions");

        open("subscriptions", "Subscriptions");
        screenshot("subscriptions");
        assertNoBrowserErrors("subscriptions");
    }

    @Test
    @Order(4)
    void createsACredentialThatAClientConnectsWith() {
        String username = "console-user-" + run;
        open("credentials", "Credentials");
        WebElement form = browser.findElement(By.id("create-credential"));
        form.findElement(By.name("username")).sendKeys(username);
        form.findElement(By.name("password")).sendKeys("device-Secret-1");
        form.findElement(By.name("publish")).sendKeys("devices/${clientid}/telemetry");
        form.findElement(By.name("subscribe")).sendKeys("devices/${clientid}/commands");
        form.findElement(By.cssSelector("button[type=submit]")).click();
        By delete = By.cssSelector("button[data-username='" + username + "']");
        wait.until(ExpectedConditions.visibilityOfElementLocated(delete));
        assertTrue(browser.findElement(By.tagName("main")).getText().contains("devices/${clientid}/telemetry"));
        screenshot("credentials");
        assertNoBrowserErrors("credentials");

        // The node takes the new credential: its password connects, another is refused.
        Mqtt5BlockingClient device = Mqtt5Client.builder().identifier("device-" + run).serverHost("127.0.0.1")
                .serverPort(node.mqttPort()).simpleAuth().username(username)
                .password("device-Secret-1".getBytes(StandardCharsets.UTF_8)).applySimpleAuth().buildBlocking();
        Await.until(WAIT, "the credential reaches the node", () -> {
            try {
                device.connect();
                return true;
            } catch (Mqtt5ConnAckException e) {
                return false;
            }
        });
        clients.add(device);
        Mqtt5BlockingClient wrong = Mqtt5Client.builder().identifier("device-wrong-" + run).serverHost("127.0.0.1")
                .serverPort(node.mqttPort()).simpleAuth().username(username)
                .password("not-the-password".getBytes(StandardCharsets.UTF_8)).applySimpleAuth().buildBlocking();
        Mqtt5ConnAckException refused = assertThrows(Mqtt5ConnAckException.class, wrong::connect);
        assertEquals(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD, refused.getMqttMessage().getReasonCode());
    }

    @Test
    @Order(5)
    void deletesARetainedMessage() {
        String topic = "console/retained/" + run;
        HttpResponse<String> published = node.send("POST", "/api/v1/publish",
                json(Map.of("topic", topic, "payload", "21.5 °C", "retain", true, "qos", 1)), token);
        assertEquals(200, published.statusCode(), published.body());
        String path = "/api/v1/retained/" + URLEncoder.encode(topic, StandardCharsets.UTF_8);
        Await.until(WAIT, "the message is retained", () -> node.get(path, token).statusCode() == 200);

        open("retained", "Retained messages");
        WebElement filter = browser.findElement(By.name("filter"));
        filter.clear();
        filter.sendKeys("console/retained/#");
        filter.submit();
        By delete = By.cssSelector("button[data-topic='" + topic + "']");
        wait.until(ExpectedConditions.elementToBeClickable(delete));
        browser.findElement(By.xpath("//button[text()='View']")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector("pre.payload"), "21.5 °C"));
        screenshot("retained");
        browser.findElement(delete).click();
        wait.until(ExpectedConditions.textToBe(delete, "Confirm delete"));
        browser.findElement(delete).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(".msg.ok"), "Deleted"));
        Await.until(WAIT, "the retained message is gone", () -> node.get(path, token).statusCode() == 404);
        assertNoBrowserErrors("retained");
    }

    @Test
    @Order(6)
    void publishesFromTheMqttPageAndShowsWhatArrives() {
        String topic = "console/page/" + run;
        open("mqtt", "MQTT client");
        int wsPort = node.broker().node().mqttPort("WebSocket");
        wait.until(ExpectedConditions.attributeToBe(By.name("port"), "value", Integer.toString(wsPort)));
        browser.findElement(By.id("mqtt-connect")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("mqtt-state"), "Connected as"));

        WebElement filter = browser.findElement(By.cssSelector("#mqtt-subscribe [name=filter]"));
        filter.clear();
        filter.sendKeys("console/page/#");
        filter.submit();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("mqtt-state"), "Subscribed to"));

        WebElement topicInput = browser.findElement(By.cssSelector("#mqtt-publish [name=topic]"));
        topicInput.clear();
        topicInput.sendKeys(topic);
        browser.findElement(By.cssSelector("#mqtt-publish [name=payload]")).sendKeys("hello from the page " + run);
        browser.findElement(By.cssSelector("#mqtt-publish button[type=submit]")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("mqtt-messages"), "hello from the page " + run));

        // A message from an ordinary client shows as text too, markup and all.
        Mqtt5BlockingClient sender = node.broker().connectedV5("console-sender-" + run);
        clients.add(sender);
        sender.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE)
                .payload("<b id=bold>not bold</b>".getBytes(StandardCharsets.UTF_8)).send();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("mqtt-messages"), "<b id=bold>not bold</b>"));
        assertTrue(browser.findElements(By.id("bold")).isEmpty());
        screenshot("mqtt");
        assertNoBrowserErrors("mqtt");
    }

    @Test
    @Order(7)
    void showsTheOtherPagesWithoutErrors() {
        open("blocked", "Blocked clients");
        WebElement form = browser.findElement(By.id("add-block"));
        form.findElement(By.name("value")).sendKeys("blocked-" + run);
        form.findElement(By.cssSelector("button[type=submit]")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("table"), "blocked-" + run));
        screenshot("blocked");
        assertNoBrowserErrors("blocked");

        open("refused", "Refused connections");
        wait.until(d -> !d.findElements(By.cssSelector(".list-body table, .list-body p")).isEmpty());
        screenshot("refused");
        open("dropped", "Dropped messages");
        wait.until(d -> !d.findElements(By.cssSelector(".list-body table, .list-body p")).isEmpty());
        screenshot("dropped");
        open("nodes", "Cluster nodes");
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("table"), "test-node"));
        screenshot("nodes");
        assertNoBrowserErrors("refused, dropped, nodes");

        // The dashboard again, now that the tests made some traffic: for the screenshot.
        open("dashboard", "Dashboard");
        wait.until(d -> d.findElements(By.cssSelector(".u-legend")).size() == 3);
        screenshot("dashboard");
        assertNoBrowserErrors("dashboard");
    }

    @Test
    @Order(8)
    void goesBackToTheLoginWhenTheTokenIsRevoked() {
        open("credentials", "Credentials");
        JavascriptExecutor js = (JavascriptExecutor) browser;
        String pageToken = (String) js.executeScript("return sessionStorage.getItem('fleetmq.token')");
        assertNotNull(pageToken);
        browser.findElement(By.id("logout")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("login")));
        assertNull(js.executeScript("return sessionStorage.getItem('fleetmq.token')"));
        assertEquals(401, node.get("/api/v1/credentials", pageToken).statusCode(), "logging out revokes the token");
        assertNoBrowserErrors("logout");

        // A page opened with a token the node no longer takes goes to the login.
        js.executeScript("sessionStorage.setItem('fleetmq.token', arguments[0])", pageToken);
        browser.get(base + "/#/credentials");
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("login")));
        assertNull(js.executeScript("return sessionStorage.getItem('fleetmq.token')"));
        for (LogEntry e : browser.manage().logs().get(LogType.BROWSER)) {
            assertTrue(e.getLevel().intValue() < Level.SEVERE.intValue() || e.getMessage().contains("status of 401"),
                    "only the expected 401: " + e.getMessage());
        }
    }

    /** Goes to a page of the console and waits for its heading. */
    private void open(String page, String heading) {
        browser.get(base + "/#/" + page);
        wait.until(ExpectedConditions.textToBe(By.cssSelector("main h1"), heading));
    }

    private void screenshot(String name) {
        try {
            Files.write(SCREENSHOTS.resolve(name + ".png"), ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Fails on any SEVERE entry the browser logged since the last call (failed loads, script errors, CSP). */
    private void assertNoBrowserErrors(String where) {
        List<String> browserErrors = new ArrayList<>();
        for (LogEntry e : browser.manage().logs().get(LogType.BROWSER)) {
            if (e.getLevel().intValue() >= Level.SEVERE.intValue()) {
                browserErrors.add(where + ": " + e.getMessage());
            }
        }
        assertTrue(browserErrors.isEmpty(), "the browser logged errors: " + browserErrors);
    }
}
