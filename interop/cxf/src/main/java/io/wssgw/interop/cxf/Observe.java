package io.wssgw.interop.cxf;

import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.cxf.message.Message;
import org.apache.cxf.phase.AbstractPhaseInterceptor;
import org.apache.cxf.phase.Phase;
import org.apache.cxf.ws.security.wss4j.WSS4JInInterceptor;
import org.apache.wss4j.dom.WSConstants;
import org.apache.wss4j.dom.engine.WSSecurityEngineResult;
import org.apache.wss4j.dom.handler.WSHandlerConstants;
import org.apache.wss4j.dom.handler.WSHandlerResult;

/**
 * What a call saw of its response, for the JSON result: the HTTP status and Content-Type (so a
 * gateway's fault is told from one raised by our own WSS4JInInterceptor), and which WS-Security
 * actions WSS4J processed and who signed.
 */
final class Observe {
    Integer status;
    String contentType;
    final List<String> processed = new ArrayList<>();
    String signer;

    /** Receive phase: the response's HTTP status and Content-Type (faults included). */
    AbstractPhaseInterceptor<Message> receive() {
        return new AbstractPhaseInterceptor<>(Phase.RECEIVE) {
            @Override
            public void handleMessage(Message m) {
                status = (Integer) m.get(Message.RESPONSE_CODE);
                contentType = (String) m.get(Message.CONTENT_TYPE);
            }
        };
    }

    /** After WSS4JInInterceptor: the results it stored on the message. */
    AbstractPhaseInterceptor<Message> results() {
        AbstractPhaseInterceptor<Message> i = new AbstractPhaseInterceptor<>(Phase.PRE_PROTOCOL) {
            @Override
            public void handleMessage(Message m) {
                collect(m);
            }
        };
        i.addAfter(WSS4JInInterceptor.class.getName());
        return i;
    }

    @SuppressWarnings("unchecked")
    void collect(Message m) {
        Object o = m.get(WSHandlerConstants.RECV_RESULTS);
        if (!(o instanceof List<?> l)) {
            return;
        }
        for (WSHandlerResult hr : (List<WSHandlerResult>) l) {
            for (WSSecurityEngineResult r : hr.getResults()) {
                Integer action = (Integer) r.get(WSSecurityEngineResult.TAG_ACTION);
                processed.add(name(action == null ? 0 : action));
                Object cert = r.get(WSSecurityEngineResult.TAG_X509_CERTIFICATE);
                if (signer == null && action != null && action == WSConstants.SIGN && cert instanceof X509Certificate c) {
                    signer = c.getSubjectX500Principal().getName();
                }
            }
        }
    }

    private static String name(int action) {
        return switch (action) {
            case WSConstants.SIGN -> "Signature";
            case WSConstants.ENCR -> "Encrypt";
            case WSConstants.TS -> "Timestamp";
            case WSConstants.BST -> "BinarySecurityToken";
            case WSConstants.SC -> "SignatureConfirmation";
            case WSConstants.UT -> "UsernameToken";
            default -> "action" + action;
        };
    }

    void into(Map<String, Object> json) {
        json.put("httpStatus", status);
        json.put("responseContentType", contentType);
        json.put("processed", processed);
        json.put("signer", signer);
    }
}
