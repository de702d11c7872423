package io.wssgw.interop.cxf;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.xml.ws.soap.SOAPBinding;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Json;

import org.apache.cxf.endpoint.Server;
import org.apache.cxf.jaxws.JaxWsServerFactoryBean;
import org.apache.cxf.ws.security.wss4j.CryptoCoverageChecker;
import org.apache.cxf.ws.security.wss4j.CryptoCoverageUtil.CoverageScope;
import org.apache.cxf.ws.security.wss4j.CryptoCoverageUtil.CoverageType;
import org.apache.cxf.ws.security.wss4j.DefaultCryptoCoverageChecker;
import org.apache.cxf.ws.security.wss4j.WSS4JInInterceptor;
import org.apache.cxf.ws.security.wss4j.WSS4JOutInterceptor;

/**
 * The service role: {@link Files} published on Jetty (loopback), requiring the request actions
 * (WSS4JInInterceptor), a signed Body and Timestamp (DefaultCryptoCoverageChecker) and, when the
 * actions include Encrypt, an encrypted Body; responses secured by WSS4JOutInterceptor,
 * encrypted for the request's signer (WSS4J's useReqSigCert). Runs until stdin closes.
 */
final class Service {
    static final Set<String> VALUE_FLAGS = withOverrides("key", "cert", "ca", "soap", "actions", "response-actions", "port", "path");
    static final Set<String> BOOL_FLAGS = Set.of("sign-timestamp", "mtom");

    private static Set<String> withOverrides(String... flags) {
        Set<String> s = new java.util.HashSet<>(Set.of(flags));
        s.addAll(Security.OVERRIDES.keySet());
        return Set.copyOf(s);
    }

    private Service() {
    }

    static int run(Args a, PrintStream out) throws Args.UsageException, IOException {
        // One JVM can serve both SOAP versions: JVM start-up and CXF's first call cost seconds.
        List<String> versions = List.of(a.get("soap", "1.1").split(","));
        for (String v : versions) {
            if (!v.equals("1.1") && !v.equals("1.2")) {
                throw new Args.UsageException("--soap must be 1.1, 1.2 or 1.1,1.2");
            }
        }
        String actions = a.get("actions", "Timestamp Signature");
        String responseActions = a.get("response-actions", actions);
        String path = a.get("path", "/files");
        if (!path.startsWith("/")) {
            throw new Args.UsageException("--path must start with /");
        }
        int port = a.intValue("port", 0);
        if (port == 0) {
            port = freePort();
        }
        Security sec = Security.load(a.require("key"), a.require("cert"), a.all("ca"), null);
        FilesImpl impl = new FilesImpl(out);
        List<Server> servers = new java.util.ArrayList<>();
        Map<String, Object> urls = new LinkedHashMap<>();
        for (String soap : versions) {
            // With both versions, SOAP 1.2 is served under /soap12 in front of the path.
            String url = "http://127.0.0.1:" + port + (versions.size() > 1 && soap.equals("1.2") ? "/soap12" : "") + path;
            servers.add(publish(a, sec, impl, soap, url, actions, responseActions));
            urls.put(soap, url);
        }

        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("ok", true);
        ready.put("url", urls.values().iterator().next());
        ready.put("urls", urls);
        ready.put("actions", Security.actionList(actions));
        ready.put("responseActions", Security.actionList(responseActions));
        ready.put("mtom", a.flag("mtom"));
        synchronized (out) {
            out.println(Json.write(ready));
            out.flush();
        }
        // Serve until the test closes our stdin (or kills us).
        InputStream in = System.in;
        byte[] buf = new byte[256];
        while (in.read(buf) >= 0) {
            // discard
        }
        for (Server s : servers) {
            s.destroy();
        }
        return 0;
    }

    private static Server publish(Args a, Security sec, FilesImpl impl, String soap, String url, String actions,
        String responseActions) {
        JaxWsServerFactoryBean sf = new JaxWsServerFactoryBean();
        sf.setServiceClass(Files.class);
        sf.setServiceBean(impl);
        sf.setAddress(url);
        sf.setBindingId(soap.equals("1.2") ? SOAPBinding.SOAP12HTTP_BINDING : SOAPBinding.SOAP11HTTP_BINDING);
        Map<String, Object> props = new HashMap<>();
        props.put("mtom-enabled", a.flag("mtom"));
        sf.setProperties(props);
        sf.getInInterceptors().add(new WSS4JInInterceptor(sec.in(actions)));
        sf.getInInterceptors().add(new DefaultCryptoCoverageChecker());
        if (Security.actionList(actions).contains("Encrypt") || Security.actionList(actions).contains("Encryption")) {
            String env = soap.equals("1.2") ? Security.SOAP12 : Security.SOAP11;
            sf.getInInterceptors().add(new CryptoCoverageChecker(Map.of("soapenv", env),
                List.of(new CryptoCoverageChecker.XPathExpression("/soapenv:Envelope/soapenv:Body",
                    CoverageType.ENCRYPTED, CoverageScope.CONTENT))));
        }
        sf.getOutInterceptors().add(new WSS4JOutInterceptor(
            Security.override(sec.out(responseActions, "useReqSigCert"), a, soap)));
        return sf.create();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
