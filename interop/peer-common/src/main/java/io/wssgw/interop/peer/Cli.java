package io.wssgw.interop.peer;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** The start of every peer's main: logging default, help, and stdout for the JSON lines. */
public final class Cli {
    private Cli() {
    }

    /**
     * Prints usage to stderr and exits (status 2 without a command, 0 for -h, --help or help);
     * otherwise returns a UTF-8 stdout that the caller flushes before it exits.
     */
    public static PrintStream start(String[] argv, String usage) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        if (argv.length == 0 || argv[0].equals("-h") || argv[0].equals("--help") || argv[0].equals("help")) {
            System.err.println(usage);
            System.exit(argv.length == 0 ? 2 : 0);
        }
        return out;
    }
}
