package io.wssgw.interop.wss4j;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.UnsupportedCallbackException;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Pem;
import io.wssgw.interop.peer.Result;

import org.apache.wss4j.common.crypto.Crypto;
import org.apache.wss4j.common.ext.WSPasswordCallback;
import org.apache.wss4j.dom.WSConstants;
import org.apache.wss4j.dom.engine.WSSecurityEngine;
import org.apache.wss4j.dom.engine.WSSecurityEngineResult;
import org.apache.wss4j.dom.handler.RequestData;
import org.apache.wss4j.dom.handler.WSHandlerResult;
import org.w3c.dom.Document;

/**
 * bench: WSS4J as a receiver the way a server runs it, for bench/peers (issue 18). Keys and
 * trust are loaded once; then every message, for --warmup and --rounds passes, is parsed into
 * a DOM and processed by WSSecurityEngine.processSecurityHeader (decryption, signature and
 * Timestamp checks), and must yield a signature (and, with --key, a decryption). Prints one
 * JSON line with the process's CPU time (every thread: GC, JIT) per message over the measured
 * rounds.
 *
 * <pre>
 * java -jar wss4j-peer.jar bench --ca CA.pem [--key K.pem --cert C.pem] [--rounds R] [--warmup W] --in F...
 * </pre>
 */
final class Bench {
    private Bench() {
    }

    static final Set<String> VALUE_FLAGS = Set.of("in", "ca", "cert", "key", "rounds", "warmup");

    static Result run(Args a) throws Exception {
        Pem.CryptoBuilder cb = new Pem.CryptoBuilder();
        for (String f : a.all("ca")) {
            for (X509Certificate c : Pem.certs(f)) {
                cb.trust(c);
            }
        }
        boolean decrypt = a.get("key") != null;
        if (decrypt) {
            cb.key("self", Pem.privateKey(a.get("key")), Pem.certs(a.require("cert")));
        }
        Crypto crypto = cb.build();
        CallbackHandler handler = callbacks -> {
            for (Callback c : callbacks) {
                if (c instanceof WSPasswordCallback pc) {
                    pc.setPassword(Pem.KEY_PASSWORD);
                } else {
                    throw new UnsupportedCallbackException(c);
                }
            }
        };
        List<byte[]> msgs = new ArrayList<>();
        for (String f : a.all("in")) {
            msgs.add(Files.readAllBytes(Path.of(f)));
        }
        if (msgs.isEmpty()) {
            throw new Args.UsageException("bench needs --in FILE (repeatable)");
        }
        int rounds = a.intValue("rounds", 3);
        int warmup = a.intValue("warmup", 5);
        WSSecurityEngine engine = new WSSecurityEngine();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long start = 0;
        for (int pass = 0; pass < warmup + rounds; pass++) {
            if (pass == warmup) {
                start = os.getProcessCpuTime();
            }
            for (byte[] m : msgs) {
                RequestData rd = new RequestData();
                rd.setCallbackHandler(handler);
                rd.setSigVerCrypto(crypto);
                rd.setDecCrypto(crypto);
                // The Timestamp is parsed and checked, its age is not: committed vectors are old.
                rd.setTimeStampStrict(false);
                rd.setTimeStampTTL(Integer.MAX_VALUE);
                rd.setTimeStampFutureTTL(Integer.MAX_VALUE);
                Document doc = Xml.parse(m);
                WSHandlerResult hr = engine.processSecurityHeader(doc, rd);
                boolean signed = false;
                boolean decrypted = false;
                for (WSSecurityEngineResult r : hr.getResults()) {
                    int action = (Integer) r.get(WSSecurityEngineResult.TAG_ACTION);
                    signed |= action == WSConstants.SIGN;
                    decrypted |= action == WSConstants.ENCR;
                }
                if (!signed || decrypt && !decrypted) {
                    return Result.fail(1, "a message was not signed" + (decrypt ? " and encrypted" : ""), "REQUIREMENT");
                }
            }
        }
        long cpu = os.getProcessCpuTime() - start;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("messages", msgs.size());
        m.put("rounds", rounds);
        m.put("cpu_us_per_msg", cpu / 1e3 / ((double) rounds * msgs.size()));
        return Result.ok(m);
    }
}
