package io.wssgw.interop.peer;

import java.util.LinkedHashMap;
import java.util.Map;

/** Outcome of one command: exit status and the JSON object describing it. */
public final class Result {
    public final int exit;
    public final Map<String, Object> json;

    private Result(int exit, Map<String, Object> json) {
        this.exit = exit;
        this.json = json;
    }

    public static Result ok(Map<String, Object> json) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        m.putAll(json);
        return new Result(0, m);
    }

    public static Result fail(int exit, String error, String code) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", error);
        if (code != null) {
            m.put("errorCode", code);
        }
        return new Result(exit, m);
    }

    /** A failure that is not the peer's verdict (exit 1, "ERROR"): an unreadable file, a bug. */
    public static Result error(Throwable e) {
        return fail(1, describe(e), "ERROR");
    }

    /** The exception's message, or its class where it has none. */
    public static String describe(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getClass().getSimpleName() + ": " + e.getMessage();
    }
}
