package io.wssgw.interop.peer;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Batch mode of the peers (wss4j-peer batch, cxf-peer client): one JVM runs many commands, so the
 * tests pay its start-up and warm-up once. Jobs arrive one per input line, a JSON array of arguments
 * or {"id":"x","args":[...]}; results leave one JSON line per job, in input order, with "id", "exit",
 * the command's own fields and "ms".
 */
public final class Batch {
    /** Runs one job's command; never throws, never exits. */
    @FunctionalInterface
    public interface Command {
        /** stdout receives a document written to "-"; it is returned base64-encoded in "document". */
        Result run(List<String> argv, OutputStream stdout);
    }

    static final Set<String> VALUE_FLAGS = Set.of("parallel");

    private Batch() {
    }

    /**
     * Reads jobs from in until it ends and runs up to --parallel N of them at once. Returns the exit
     * status: 0 when every job succeeded, 1 when one failed, 2 for a usage error. peer (the jar's
     * name) prefixes the messages on stderr and the thread names.
     */
    public static int run(String peer, List<String> argv, InputStream in, PrintStream out, Command command) {
        int parallel;
        try {
            Args a = new Args(argv, VALUE_FLAGS, Set.of());
            parallel = a.intValue("parallel", 1);
            if (parallel < 1) {
                throw new Args.UsageException("--parallel must be >= 1");
            }
        } catch (Args.UsageException e) {
            System.err.println(peer + ": " + e.getMessage());
            return 2;
        }
        ExecutorService pool = Executors.newFixedThreadPool(parallel, r -> {
            Thread t = new Thread(r, peer + "-job");
            t.setDaemon(true);
            return t;
        });
        LinkedBlockingQueue<Future<String>> queue = new LinkedBlockingQueue<>();
        Future<String> end = new CompletableFuture<>();
        final int[] failures = {0};
        Thread printer = new Thread(() -> {
            try {
                while (true) {
                    Future<String> f = queue.take();
                    if (f == end) {
                        return;
                    }
                    String line = f.get();
                    synchronized (out) {
                        out.println(line);
                        out.flush();
                    }
                }
            } catch (Exception e) {
                System.err.println(peer + ": batch printer: " + e);
            }
        }, peer + "-printer");
        printer.start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
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
                    String s = runJob(l, no, command);
                    if (!s.contains("\"ok\":true")) {
                        synchronized (failures) {
                            failures[0]++;
                        }
                    }
                    return s;
                }));
            }
        } catch (Exception e) {
            System.err.println(peer + ": reading jobs: " + e);
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

    static String runJob(String line, int lineNo, Command command) {
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
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            r = command.run(argv, captured);
            if (captured.size() > 0) {
                r.json.put("document", Base64.getEncoder().encodeToString(captured.toByteArray()));
            }
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
