package io.wssgw.interop.peer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** GNU-style flag parser: "--name value", "--name=value", boolean "--name". Flags may repeat. */
public final class Args {
    /** Thrown for command-line errors (exit status 2). */
    public static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        public UsageException(String msg) {
            super(msg);
        }
    }

    private final Map<String, List<String>> values = new LinkedHashMap<>();

    public Args(List<String> argv, Set<String> valueFlags, Set<String> boolFlags) throws UsageException {
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            if (!a.startsWith("--")) {
                throw new UsageException("unexpected argument: " + a);
            }
            String name = a.substring(2);
            String val = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                val = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (boolFlags.contains(name)) {
                if (val != null && !val.equals("true") && !val.equals("false")) {
                    throw new UsageException("--" + name + " takes no value");
                }
                values.computeIfAbsent(name, k -> new ArrayList<>()).add(val == null ? "true" : val);
            } else if (valueFlags.contains(name)) {
                if (val == null) {
                    if (i + 1 >= argv.size()) {
                        throw new UsageException("--" + name + " needs a value");
                    }
                    val = argv.get(++i);
                }
                values.computeIfAbsent(name, k -> new ArrayList<>()).add(val);
            } else {
                throw new UsageException("unknown flag --" + name);
            }
        }
    }

    public String get(String name) {
        List<String> l = values.get(name);
        return l == null ? null : l.get(l.size() - 1);
    }

    public String get(String name, String def) {
        String v = get(name);
        return v == null ? def : v;
    }

    public String require(String name) throws UsageException {
        String v = get(name);
        if (v == null || v.isEmpty()) {
            throw new UsageException("missing --" + name);
        }
        return v;
    }

    public List<String> all(String name) {
        List<String> l = values.get(name);
        return l == null ? List.of() : l;
    }

    public boolean flag(String name) {
        return "true".equals(get(name));
    }

    public int intValue(String name, int def) throws UsageException {
        String v = get(name);
        if (v == null) {
            return def;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + ": not an integer: " + v);
        }
    }
}
