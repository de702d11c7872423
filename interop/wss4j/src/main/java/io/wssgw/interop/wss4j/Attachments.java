package io.wssgw.interop.wss4j;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.UnsupportedCallbackException;

import org.apache.wss4j.common.ext.Attachment;
import org.apache.wss4j.common.ext.AttachmentRequestCallback;
import org.apache.wss4j.common.ext.AttachmentResultCallback;

/**
 * The attachment store WSS4J reads and writes through callbacks (its SwA and XOP support never sees
 * MIME itself). AttachmentRequestCallback with id "Attachments" asks for all of them (the
 * "cid:Attachments" sign/encrypt part), any other id for that one Content-ID. AttachmentResultCallback
 * hands back a transformed attachment (encrypted on the sending side, decrypted on the receiving side)
 * which replaces the stored one, so that a later signature check sees the decrypted bytes.
 *
 * <p>A receiving store (see {@link #removing}) behaves like CXF's AttachmentCallbackHandler: a request
 * with isRemoveAttachments() (WSS4J's default, and what its XOP inlining asks for) takes the attachment out
 * of the message until an AttachmentResultCallback hands it back. So a cid: Reference to a part that an
 * xop:Include of a signed element already consumed fails as it does in CXF ("Attachment not found").
 */
final class Attachments implements CallbackHandler {
    /** One attachment: Content-ID (no brackets), MIME headers as WSS4J wants them, bytes. */
    static final class Item {
        final String id;
        String mimeType;
        final Map<String, String> headers;
        byte[] bytes;
        boolean replaced;
        /** Taken out of the message by a removing request and not handed back (CXF semantics). */
        boolean removed;

        Item(String id, String mimeType, Map<String, String> headers, byte[] bytes) {
            this.id = id;
            this.mimeType = mimeType;
            this.headers = headers;
            this.bytes = bytes;
        }

        Attachment toAttachment() {
            Attachment a = new Attachment();
            a.setId(id);
            a.setMimeType(mimeType);
            a.addHeaders(new LinkedHashMap<>(headers));
            a.setSourceStream(new ByteArrayInputStream(bytes));
            return a;
        }
    }

    private final Map<String, Item> items = new LinkedHashMap<>();
    /** Ids WSS4J asked for, in order (tells which attachments a signature or decryption touched). */
    final List<String> requested = new ArrayList<>();
    /** Whether removing requests take attachments out, as CXF's receiver does. */
    private final boolean removing;

    Attachments() {
        this(false);
    }

    Attachments(boolean removing) {
        this.removing = removing;
    }

    void add(Item it) {
        if (items.putIfAbsent(it.id, it) != null) {
            throw new IllegalArgumentException("duplicate attachment Content-ID " + it.id);
        }
    }

    List<Item> items() {
        return new ArrayList<>(items.values());
    }

    Item get(String id) {
        return items.get(id);
    }

    synchronized Item remove(String id) {
        return items.remove(id);
    }

    boolean isEmpty() {
        return items.isEmpty();
    }

    @Override
    public void handle(Callback[] callbacks) throws IOException, UnsupportedCallbackException {
        for (Callback c : callbacks) {
            if (c instanceof AttachmentRequestCallback rc) {
                List<Attachment> out = new ArrayList<>();
                synchronized (this) {
                    requested.add(rc.getAttachmentId());
                    boolean all = "Attachments".equals(rc.getAttachmentId());
                    for (Item it : items.values()) {
                        if (it.removed || !(all || it.id.equals(rc.getAttachmentId()))) {
                            continue;
                        }
                        out.add(it.toAttachment());
                        it.removed = removing && rc.isRemoveAttachments();
                    }
                }
                rc.setAttachments(out);
            } else if (c instanceof AttachmentResultCallback res) {
                Attachment a = res.getAttachment();
                byte[] bytes = a.getSourceStream().readAllBytes();
                Map<String, String> headers = new LinkedHashMap<>(a.getHeaders());
                String id = res.getAttachmentId() != null ? res.getAttachmentId() : a.getId();
                synchronized (this) {
                    // The signature transforms hand every attachment back unchanged; only a changed
                    // body (decryption, encryption) counts as replaced.
                    Item old = items.get(id);
                    Item it = new Item(id, a.getMimeType(), headers, bytes);
                    it.replaced = old == null || !java.util.Arrays.equals(old.bytes, bytes) || (old.replaced);
                    items.put(id, it);
                }
            } else {
                throw new UnsupportedCallbackException(c);
            }
        }
    }
}
