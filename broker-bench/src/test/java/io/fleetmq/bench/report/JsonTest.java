package io.fleetmq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void fieldsNestAndKeepTheirOrder() {
        String json = new Json()
                .field("s", "x")
                .field("n", 42)
                .field("d", 1.25)
                .field("b", true)
                .field("o", new Json().field("k", 1))
                .field("none", (Json) null)
                .field("list", List.of("a", "b"))
                .toString();
        assertEquals("{\"s\":\"x\",\"n\":42,\"d\":1.3,\"b\":true,\"o\":{\"k\":1},\"none\":null,\"list\":[\"a\",\"b\"]}",
                json);
    }

    @Test
    void stringsAreEscapedSoErrorTextCannotBreakTheLine() {
        assertEquals("\"a\\\"b\\\\c\\nd\\te\\u0001\"", Json.quote("a\"b\\c\nd\te\u0001"));
    }

    @Test
    void numbersJsonCannotExpressBecomeNull() {
        assertEquals("{\"x\":null}", new Json().field("x", Double.NaN).toString());
        assertEquals("{\"x\":null}", new Json().field("x", Double.POSITIVE_INFINITY).toString());
    }
}
