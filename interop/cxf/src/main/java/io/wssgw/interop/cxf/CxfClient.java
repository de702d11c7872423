package io.wssgw.interop.cxf;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import jakarta.activation.DataHandler;
import jakarta.xml.ws.WebServiceException;
import jakarta.xml.ws.soap.SOAPBinding;
import jakarta.xml.ws.soap.SOAPFaultException;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Result;

import org.apache.cxf.attachment.ByteDataSource;
import org.apache.cxf.endpoint.Client;
import org.apache.cxf.frontend.ClientProxy;
import org.apache.cxf.jaxws.JaxWsProxyFactoryBean;
import org.apache.cxf.transport.http.HTTPConduit;
import org.apache.cxf.transports.http.configuration.HTTPClientPolicy;
import org.apache.cxf.ws.security.wss4j.DefaultCryptoCoverageChecker;
import org.apache.cxf.ws.security.wss4j.WSS4JInInterceptor;
import org.apache.cxf.ws.security.wss4j.WSS4JOutInterceptor;

/**
 * The client role: one JAX-WS call through a JaxWsProxyFactoryBean proxy of {@link Files},
 * secured by CXF's WSS4JOutInterceptor and checked by its WSS4JInInterceptor and
 * DefaultCryptoCoverageChecker (signed Body and Timestamp), MTOM on unless --no-mtom.
 */
final class CxfClient {
    static final Set<String> VALUE_FLAGS = withOverrides("url", "soap", "key", "cert", "ca", "encrypt-cert", "actions",
        "response-actions", "attachment", "name", "timeout", "http-version");
    static final Set<String> BOOL_FLAGS = Set.of("sign-timestamp", "no-mtom", "no-response-security");

    private static Set<String> withOverrides(String... flags) {
        Set<String> s = new java.util.HashSet<>(Set.of(flags));
        s.addAll(Security.OVERRIDES.keySet());
        return Set.copyOf(s);
    }

    private CxfClient() {
    }

    static Result run(Args a) throws Args.UsageException, IOException {
        String url = a.require("url");
        String soap = a.get("soap", "1.1");
        if (!soap.equals("1.1") && !soap.equals("1.2")) {
            throw new Args.UsageException("--soap must be 1.1 or 1.2");
        }
        String actions = a.get("actions", "Timestamp Signature");
        String responseActions = a.get("response-actions", "Timestamp Signature");
        boolean mtom = !a.flag("no-mtom");
        byte[] data = Files.readAllBytes(Path.of(a.require("attachment")));
        Security sec = Security.load(a.require("key"), a.require("cert"), a.all("ca"), a.get("encrypt-cert"));

        JaxWsProxyFactoryBean f = new JaxWsProxyFactoryBean();
        f.setServiceClass(io.wssgw.interop.cxf.Files.class);
        f.setAddress(url);
        f.setBindingId(soap.equals("1.2") ? SOAPBinding.SOAP12HTTP_BINDING : SOAPBinding.SOAP11HTTP_BINDING);
        Map<String, Object> props = new HashMap<>();
        props.put("mtom-enabled", mtom);
        f.setProperties(props);
        f.getOutInterceptors().add(new WSS4JOutInterceptor(Security.override(sec.out(actions, Security.PARTNER), a, soap)));
        Observe seen = new Observe();
        f.getInInterceptors().add(seen.receive());
        f.getInFaultInterceptors().add(seen.receive());
        if (!a.flag("no-response-security")) {
            f.getInInterceptors().add(new WSS4JInInterceptor(sec.in(responseActions)));
            // Signed Body and Timestamp on every answer but a fault: a fault from a gateway that
            // refused our request is unsigned, and must reach the caller as that fault.
            DefaultCryptoCoverageChecker coverage = new DefaultCryptoCoverageChecker();
            coverage.setCheckFaults(false);
            f.getInInterceptors().add(coverage);
            f.getInInterceptors().add(seen.results());
        }
        io.wssgw.interop.cxf.Files port = (io.wssgw.interop.cxf.Files) f.create();
        Client c = ClientProxy.getClient(port);
        HTTPClientPolicy policy = new HTTPClientPolicy();
        long timeout = a.intValue("timeout", 60) * 1000L;
        policy.setReceiveTimeout(timeout);
        policy.setConnectionTimeout(timeout);
        // CXF 4's default conduit (java.net.http) asks a plain-HTTP server for an h2c upgrade
        // (Upgrade: h2c, HTTP2-Settings); "1.1" stops that, "2"/"auto" are CXF's own choices.
        if (a.get("http-version") != null) {
            policy.setVersion(a.get("http-version"));
        }
        ((HTTPConduit) c.getConduit()).setClient(policy);

        Upload u = new Upload();
        u.name = a.get("name", "upload.bin");
        u.data = new DataHandler(new ByteDataSource(data, "application/octet-stream"));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("soapVersion", soap);
        json.put("mtom", mtom);
        json.put("actions", Security.actionList(actions));
        try {
            Receipt r = port.upload(u);
            byte[] back = read(r.data);
            json.put("name", r.name);
            json.put("size", r.size);
            json.put("sha256", r.sha256);
            json.put("dataBytes", back.length);
            json.put("dataSha256", sha256(back));
            seen.into(json);
            return Result.ok(json);
        } catch (SOAPFaultException e) {
            Result res = Result.fail(1, e.getFault().getFaultString(), "FAULT");
            res.json.put("faultCode", e.getFault().getFaultCodeAsQName().toString());
            res.json.putAll(json);
            seen.into(res.json);
            return res;
        } catch (WebServiceException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            Result res = Result.error(cause);
            res.json.putAll(json);
            seen.into(res.json);
            return res;
        } finally {
            c.destroy();
        }
    }

    static byte[] read(DataHandler dh) throws IOException {
        if (dh == null) {
            return new byte[0];
        }
        try (InputStream in = dh.getInputStream()) {
            return in.readAllBytes();
        }
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
