package io.fleetmq.persistence.security;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** The WHERE clause of a listing, built from the filters that are set, with its parameters in order. */
final class Conditions {

    private final List<String> clauses = new ArrayList<>();
    private final List<Object> parameters = new ArrayList<>();

    /** {@code column = value}, when value is set. */
    Conditions equal(String column, String value) {
        if (value != null) {
            clauses.add(column + " = ?");
            parameters.add(value);
        }
        return this;
    }

    /** Whether any of the columns contains {@code part}, ignoring case, when part is set. */
    Conditions contains(String part, String... columns) {
        if (part != null) {
            List<String> any = new ArrayList<>();
            for (String column : columns) {
                // strpos, not LIKE: the part's own % and _ must not act as wildcards.
                any.add("strpos(lower(" + column + "), lower(?)) > 0");
                parameters.add(part);
            }
            clauses.add("(" + String.join(" OR ", any) + ")");
        }
        return this;
    }

    String where() {
        return clauses.isEmpty() ? "" : " WHERE " + String.join(" AND ", clauses);
    }

    /** Binds the parameters from index 1; returns the next free index. */
    int bind(PreparedStatement st) throws SQLException {
        int index = 1;
        for (Object parameter : parameters) {
            st.setObject(index++, parameter);
        }
        return index;
    }
}
