package io.wssgw.interop.cxf;

import java.util.LinkedHashMap;
import java.util.Map;

/** Outcome of one command: exit status and the JSON object describing it. */
final class Result {
    final int exit;
    final Map<String, Object> json;

    private Result(int exit, Map<String, Object> json) {
        this.exit = exit;
        this.json = json;
    }

    static Result ok(Map<String, Object> json) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        m.putAll(json);
        return new Result(0, m);
    }

    static Result fail(int exit, String error, String code) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", error);
        if (code != null) {
            m.put("errorCode", code);
        }
        return new Result(exit, m);
    }
}
