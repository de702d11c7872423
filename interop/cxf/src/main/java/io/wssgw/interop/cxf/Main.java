package io.wssgw.interop.cxf;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Batch;
import io.wssgw.interop.peer.Cli;
import io.wssgw.interop.peer.Json;
import io.wssgw.interop.peer.Result;

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
        PrintStream out = Cli.start(argv, USAGE);
        // CXF logs through java.util.logging; every fault it unwinds is a WARNING. The JSON
        // result says what failed; -Dcxfpeer.log=INFO brings the log back.
        java.util.logging.Level level = java.util.logging.Level.parse(System.getProperty("cxfpeer.log", "SEVERE"));
        ROOT_LOG.setLevel(level);
        for (java.util.logging.Handler h : ROOT_LOG.getHandlers()) {
            h.setLevel(level);
        }
        DSIG_LOG.setLevel(java.util.logging.Level.SEVERE);
        List<String> rest = Arrays.asList(argv).subList(1, argv.length);
        int code;
        switch (argv[0]) {
            case "client" -> code = Batch.run("cxf-peer", rest, System.in, out, (args, stdout) -> dispatch(args));
            case "serve" -> {
                try {
                    code = Service.run(new Args(rest, Service.VALUE_FLAGS, Service.BOOL_FLAGS), out);
                } catch (Args.UsageException e) {
                    out.println(Json.write(Result.fail(2, e.getMessage(), "USAGE").json));
                    code = 2;
                } catch (Exception e) {
                    out.println(Json.write(Result.error(e).json));
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
            return Result.error(e);
        }
    }
}
