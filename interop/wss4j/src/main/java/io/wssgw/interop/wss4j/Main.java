package io.wssgw.interop.wss4j;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Batch;
import io.wssgw.interop.peer.Cli;
import io.wssgw.interop.peer.Json;
import io.wssgw.interop.peer.Result;

import org.apache.wss4j.dom.engine.WSSConfig;

/**
 * wss4j-peer: an Apache WSS4J (DOM) command-line peer for wssgw interoperability tests.
 *
 * <pre>
 * java -jar wss4j-peer.jar sign    --profile P --in FILE [--out FILE] [key flags...]
 * java -jar wss4j-peer.jar verify  --in FILE [--ca FILE] [--cert FILE [--key FILE]] ...
 * java -jar wss4j-peer.jar batch   [--parallel N]   (one JSON job per stdin line)
 * java -jar wss4j-peer.jar profiles
 * </pre>
 */
public final class Main {
    private Main() {
    }

    static final String USAGE = String.join("\n",
        "usage: java -jar wss4j-peer.jar <command> [flags]",
        "",
        "commands:",
        "  sign      --profile P --in FILE|- [--out FILE|-] [--key K.pem --cert C.pem [--chain CA.pem]]",
        "            [--encrypt-cert S.pem] [--user U --password P] [--ttl SEC] [--no-timestamp] [--now RFC3339]",
        "            [--signature-algorithm A] [--digest-algorithm A] [--c14n A] [--key-identifier K]",
        "            [--no-inclusive-prefixes] [--pkipath] [--sign-encrypted-key] [--include-bst-in-signature]",
        "            [--symmetric-algorithm A] [--key-transport A] [--oaep-digest A] [--mgf A]",
        "            [--encrypt-key-identifier K] [--actor URI] [--sign-header {NS}LOCAL]... [--encrypt-header {NS}LOCAL]...",
        "            [--str-transform] [--x509-signature] [--username-token digest|text]",
        "            [--confirm-signature B64]... [--attachment FILE [--attachment-type CT] [--content-id ID]]...",
        "            [--mime-out FILE [--package mtom|swa] [--xop-expand] [--swa content|complete]",
        "             [--swa-encrypt content|complete] [--trailing-signature]]",
        "  verify    --in FILE|- [--ca CA.pem]... [--cert C.pem [--key K.pem]] [--signer-cert C.pem]...",
        "            [--user U --password P] [--ttl SEC] [--future-ttl SEC] [--no-timestamp-check]",
        "            [--no-bsp] [--allow-rsa15] [--require LIST] [--actor URI] [--out FILE|-]",
        "            [--mime FILE --content-type CT [--trailing-signature] [--no-xop-expand]] (instead of --in)",
        "            [--expect-confirmation B64]",
        "  batch     [--parallel N]   jobs on stdin, one JSON per line: [\"sign\",\"--profile\",...] or",
        "            {\"id\":\"x\",\"args\":[...]}; one JSON result line per job on stdout (input order)",
        "  bench     --ca CA.pem [--key K.pem --cert C.pem] [--rounds R] [--warmup W] --in FILE...",
        "            receiver throughput: keys loaded once, CPU time per message (bench/peers)",
        "  profiles  list the sign profiles",
        "",
        "exit status: 0 ok, 1 security/processing failure, 2 usage error");

    /** Held so that the level set in main is not lost to garbage collection of the logger. */
    private static final java.util.logging.Logger JDK_DSIG_LOG =
        java.util.logging.Logger.getLogger("org.apache.jcp.xml.dsig.internal.dom");

    public static void main(String[] argv) {
        PrintStream out = Cli.start(argv, USAGE);
        // The JDK's XML-DSig reference logs a java.util.logging warning for every SwA attachment
        // reference (WSS4J's transform writes to the digest stream itself, so "input bytes are null").
        JDK_DSIG_LOG.setLevel(java.util.logging.Level.SEVERE);
        WSSConfig.init();
        int code;
        if (argv[0].equals("batch")) {
            Xml.stdinReserved = true; // stdin carries the jobs
            code = Batch.run("wss4j-peer", Arrays.asList(argv).subList(1, argv.length), System.in, out, Main::dispatch);
        } else {
            Result r = dispatch(Arrays.asList(argv), out);
            // One JSON result line on stdout, except when sign writes the document there (--out -).
            boolean resultToStdout = !argv[0].equals("sign") || !stdoutUsedForDocument(argv);
            if (r.exit != 0) {
                System.err.println("wss4j-peer: " + r.json.get("error"));
            }
            if (resultToStdout) {
                out.println(Json.write(r.json));
            }
            code = r.exit;
        }
        out.flush();
        System.exit(code);
    }

    private static boolean stdoutUsedForDocument(String[] argv) {
        // sign writes the document to stdout unless --out names a file.
        String o = "-";
        for (String arg : argv) {
            if (arg.equals("--mime-out") || arg.startsWith("--mime-out=")) {
                o = null; // the package goes to a file; the root part only where --out says
            }
        }
        for (int i = 0; i < argv.length; i++) {
            if (argv[i].equals("--out") && i + 1 < argv.length) {
                o = argv[i + 1];
            } else if (argv[i].startsWith("--out=")) {
                o = argv[i].substring(6);
            }
        }
        return "-".equals(o);
    }

    /** Runs one command; never throws, never exits. */
    static Result dispatch(List<String> argv, OutputStream stdout) {
        if (argv.isEmpty()) {
            return Result.fail(2, "missing command", "USAGE");
        }
        String cmd = argv.get(0);
        List<String> rest = argv.subList(1, argv.size());
        try {
            switch (cmd) {
                case "sign":
                    return Sign.run(new Args(rest, Sign.VALUE_FLAGS, Sign.BOOL_FLAGS), stdout);
                case "verify":
                    return Verify.run(new Args(rest, Verify.VALUE_FLAGS, Verify.BOOL_FLAGS), stdout);
                case "bench":
                    return Bench.run(new Args(rest, Bench.VALUE_FLAGS, Set.of()));
                case "profiles": {
                    Map<String, Object> m = new LinkedHashMap<>();
                    Map<String, Object> p = new LinkedHashMap<>();
                    for (Sign.Profile pr : Sign.PROFILES.values()) {
                        p.put(pr.name(), pr.description());
                    }
                    m.put("profiles", p);
                    return Result.ok(m);
                }
                case "batch":
                    // Only a batch job gets here with "batch": main runs the command itself.
                    return Result.fail(2, "bad job: nested batch", "USAGE");
                default:
                    return Result.fail(2, "unknown command " + cmd + " (known: sign, verify, bench, profiles, batch)", "USAGE");
            }
        } catch (Args.UsageException e) {
            return Result.fail(2, e.getMessage(), "USAGE");
        } catch (org.apache.wss4j.common.ext.WSSecurityException e) {
            return Verify.failure(e);
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            return Result.error(e);
        }
    }
}
