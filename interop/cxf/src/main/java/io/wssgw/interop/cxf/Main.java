package io.wssgw.interop.cxf;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * cxf-peer: Apache CXF 4 (JAX-WS frontend, WSS4J interceptors) as a partner of wssgw in tests.
 *
 * <pre>
 * java -jar cxf-peer.jar call    --url URL --key K --cert C --ca CA --attachment FILE [flags]
 * java -jar cxf-peer.jar client  [--parallel N]   (one call per stdin line, JSON result lines)
 * java -jar cxf-peer.jar serve   --key K --cert C --ca CA [flags]   (until stdin closes)
 * </pre>
 */
public final class Main {
    private Main() {
    }

    static final String USAGE = String.join("\n",
        "usage: java -jar cxf-peer.jar <command> [flags]",
        "",
        "commands:",
        "  call    --url URL --key K.pem --cert C.pem --ca CA.pem... --attachment FILE [--name N]",
        "          [--soap 1.1|1.2] [--actions \"Timestamp Signature[ Encrypt]\"] [--encrypt-cert S.pem]",
        "          [--response-actions A] [--no-response-security] [--no-mtom] [--timeout SEC] [--http-version 1.1|2|auto]",
        "          [--sign-timestamp] [--signature-algorithm URI] [--digest-algorithm URI] [--signature-parts P]",
        "          [--symmetric-algorithm URI] [--key-transport URI] [--encryption-parts P]",
        "  client  [--parallel N]   calls on stdin, one JSON per line: [\"call\",\"--url\",...] or",
        "          {\"id\":\"x\",\"args\":[...]}; one JSON result line per call on stdout (input order)",
        "  serve   --key K.pem --cert C.pem --ca CA.pem... [--soap 1.1|1.2|1.1,1.2] [--actions A]",
        "          [--response-actions A] [--mtom] [--port P] [--path /files] [--sign-timestamp] [algorithm flags as call]",
        "          prints {\"ok\":true,\"url\":...}, then one {\"event\":\"upload\",...} line per served call;",
        "          stops when stdin closes",
        "",
        "exit status: 0 ok, 1 call failed (fault, security or transport error), 2 usage error");

    /** Held so the levels set in main survive garbage collection of the loggers. */
    private static final java.util.logging.Logger ROOT_LOG = java.util.logging.Logger.getLogger("");
    private static final java.util.logging.Logger DSIG_LOG =
        java.util.logging.Logger.getLogger("org.apache.jcp.xml.dsig.internal.dom");

    public static void main(String[] argv) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        }
        // CXF logs through java.util.logging; every fault it unwinds is a WARNING. The JSON
        // result says what failed; -Dcxfpeer.log=INFO brings the log back.
        java.util.logging.Level level = java.util.logging.Level.parse(System.getProperty("cxfpeer.log", "SEVERE"));
        ROOT_LOG.setLevel(level);
        for (java.util.logging.Handler h : ROOT_LOG.getHandlers()) {
            h.setLevel(level);
        }
        DSIG_LOG.setLevel(java.util.logging.Level.SEVERE);
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
        if (argv.length == 0 || argv[0].equals("-h") || argv[0].equals("--help") || argv[0].equals("help")) {
            System.err.println(USAGE);
            System.exit(argv.length == 0 ? 2 : 0);
        }
        List<String> rest = Arrays.asList(argv).subList(1, argv.length);
        int code;
        switch (argv[0]) {
            case "client" -> code = batch(rest, out);
            case "serve" -> {
                try {
                    code = Service.run(new Args(rest, Service.VALUE_FLAGS, Service.BOOL_FLAGS), out);
                } catch (Args.UsageException e) {
                    out.println(Json.write(Result.fail(2, e.getMessage(), "USAGE").json));
                    code = 2;
                } catch (Exception e) {
                    out.println(Json.write(Result.fail(1, describe(e), "ERROR").json));
                    code = 1;
                }
            }
            default -> {
                Result r = dispatch(Arrays.asList(argv));
                if (r.exit != 0) {
                    System.err.println("cxf-peer: " + r.json.get("error"));
                }
                out.println(Json.write(r.json));
                code = r.exit;
            }
        }
        out.flush();
        System.exit(code);
    }

    static String describe(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    /** Runs one command; never throws, never exits. */
    static Result dispatch(List<String> argv) {
        if (argv.isEmpty()) {
            return Result.fail(2, "missing command", "USAGE");
        }
        String cmd = argv.get(0);
        List<String> rest = argv.subList(1, argv.size());
        try {
            if (cmd.equals("call")) {
                return CxfClient.run(new Args(rest, CxfClient.VALUE_FLAGS, CxfClient.BOOL_FLAGS));
            }
            return Result.fail(2, "unknown command " + cmd + " (known: call, client, serve)", "USAGE");
        } catch (Args.UsageException e) {
            return Result.fail(2, e.getMessage(), "USAGE");
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            return Result.fail(1, describe(e), "ERROR");
        }
    }

    /** Client mode: calls read from stdin, results written in input order, one line each. */
    static int batch(List<String> argv, PrintStream out) {
        int parallel;
        try {
            Args a = new Args(argv, Set.of("parallel"), Set.of());
            parallel = a.intValue("parallel", 1);
            if (parallel < 1) {
                throw new Args.UsageException("--parallel must be >= 1");
            }
        } catch (Args.UsageException e) {
            System.err.println("cxf-peer: " + e.getMessage());
            return 2;
        }
        ExecutorService pool = Executors.newFixedThreadPool(parallel, r -> {
            Thread t = new Thread(r, "cxf-peer-call");
            t.setDaemon(true);
            return t;
        });
        LinkedBlockingQueue<Future<String>> queue = new LinkedBlockingQueue<>();
        Future<String> end = new java.util.concurrent.CompletableFuture<>();
        final int[] failures = {0};
        Thread printer = new Thread(() -> {
            try {
                while (true) {
                    Future<String> f = queue.take();
                    if (f == end) {
                        return;
                    }
                    String line = f.get();
                    out.println(line);
                    out.flush();
                }
            } catch (Exception e) {
                System.err.println("cxf-peer: printer: " + e);
            }
        }, "cxf-peer-printer");
        printer.start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            int lineNo = 0;
            while ((line = r.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                final String l = line;
                final int no = lineNo;
                queue.add(pool.submit(() -> {
                    String s = runJob(l, no);
                    if (!s.contains("\"ok\":true")) {
                        synchronized (failures) {
                            failures[0]++;
                        }
                    }
                    return s;
                }));
            }
        } catch (Exception e) {
            System.err.println("cxf-peer: reading calls: " + e);
        }
        queue.add(end);
        try {
            printer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pool.shutdownNow();
        return failures[0] == 0 ? 0 : 1;
    }

    static String runJob(String line, int lineNo) {
        long t0 = System.nanoTime();
        Object id = lineNo;
        Result r;
        try {
            Object job = Json.parse(line);
            List<?> args;
            if (job instanceof Map<?, ?> m) {
                if (m.containsKey("id")) {
                    id = m.get("id");
                }
                if (!(m.get("args") instanceof List<?> l)) {
                    throw new IllegalArgumentException("job object needs \"args\": [...]");
                }
                args = l;
            } else if (job instanceof List<?> l) {
                args = l;
            } else {
                throw new IllegalArgumentException("job must be a JSON array of arguments or an object with \"args\"");
            }
            List<String> argv = new ArrayList<>();
            for (Object o : args) {
                if (!(o instanceof String s)) {
                    throw new IllegalArgumentException("arguments must be strings");
                }
                argv.add(s);
            }
            r = dispatch(argv);
        } catch (Exception e) {
            r = Result.fail(2, "bad job: " + e.getMessage(), "USAGE");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("exit", r.exit);
        m.putAll(r.json);
        m.put("ms", Math.round((System.nanoTime() - t0) / 1e5) / 10.0);
        return Json.write(m);
    }
}
