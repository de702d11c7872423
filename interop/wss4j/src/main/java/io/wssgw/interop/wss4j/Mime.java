package io.wssgw.interop.wss4j;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A small multipart/related (RFC 2387) reader and writer for MTOM/XOP and SwA packages. Test tooling:
 * whole packages in memory, binary/8bit/7bit/base64 transfer encodings, no nested multiparts.
 */
final class Mime {
    private Mime() {
    }

    /** One MIME part: headers in wire order (names as written) and the decoded body. */
    record Part(Map<String, String> headers, byte[] body) {
        String header(String name) {
            for (Map.Entry<String, String> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue();
                }
            }
            return null;
        }

        /** The Content-ID without its angle brackets, or null. */
        String contentId() {
            String id = header("Content-ID");
            if (id == null) {
                return null;
            }
            id = id.trim();
            return id.startsWith("<") && id.endsWith(">") ? id.substring(1, id.length() - 1) : id;
        }

        String contentType() {
            String ct = header("Content-Type");
            return ct == null ? "text/plain" : ct;
        }
    }

    /** A parsed package: the root part (start parameter, or the first part) and the others in order. */
    record Package(String contentType, Part root, List<Part> attachments) {
    }

    /** The value of a Content-Type parameter (case-insensitive name, quotes removed), or null. */
    static String param(String contentType, String name) {
        for (String p : splitParams(contentType)) {
            int eq = p.indexOf('=');
            if (eq > 0 && p.substring(0, eq).trim().equalsIgnoreCase(name)) {
                String v = p.substring(eq + 1).trim();
                if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                    v = v.substring(1, v.length() - 1).replaceAll("\\\\(.)", "$1");
                }
                return v;
            }
        }
        return null;
    }

    /** The media type of a Content-Type value, lower-cased, without parameters. */
    static String mediaType(String contentType) {
        List<String> p = splitParams(contentType);
        return p.isEmpty() ? "" : p.get(0).trim().toLowerCase(Locale.ROOT);
    }

    /** Splits on ';' outside double quotes. */
    private static List<String> splitParams(String s) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' && (i == 0 || s.charAt(i - 1) != '\\')) {
                quoted = !quoted;
            }
            if (c == ';' && !quoted) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }

    static Package parse(byte[] data, String contentType) {
        if (!mediaType(contentType).equals("multipart/related")) {
            throw new IllegalArgumentException("content type is not multipart/related: " + contentType);
        }
        String boundary = param(contentType, "boundary");
        if (boundary == null || boundary.isEmpty()) {
            throw new IllegalArgumentException("multipart/related without boundary");
        }
        byte[] delim = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        List<Part> parts = new ArrayList<>();
        int pos = indexOf(data, delim, 0);
        if (pos < 0 || (pos > 0 && !(pos >= 2 && data[pos - 2] == '\r' && data[pos - 1] == '\n'))) {
            throw new IllegalArgumentException("no opening boundary at a line start");
        }
        while (true) {
            int after = pos + delim.length;
            if (after + 1 < data.length && data[after] == '-' && data[after + 1] == '-') {
                break; // close delimiter
            }
            int lineEnd = indexOf(data, new byte[] {'\r', '\n'}, after);
            if (lineEnd < 0) {
                throw new IllegalArgumentException("truncated boundary line");
            }
            int start = lineEnd + 2;
            int next = indexOf(data, concat(new byte[] {'\r', '\n'}, delim), start);
            if (next < 0) {
                throw new IllegalArgumentException("missing close delimiter");
            }
            parts.add(parsePart(Arrays.copyOfRange(data, start, next)));
            pos = next + 2;
        }
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("multipart/related without parts");
        }
        String start = param(contentType, "start");
        Part root = parts.get(0);
        if (start != null) {
            String want = start.trim().replaceAll("^<|>$", "");
            root = null;
            for (Part p : parts) {
                if (want.equals(p.contentId())) {
                    root = p;
                    break;
                }
            }
            if (root == null) {
                throw new IllegalArgumentException("no part has the start Content-ID " + start);
            }
        }
        List<Part> rest = new ArrayList<>(parts);
        rest.remove(root);
        return new Package(contentType, root, rest);
    }

    private static Part parsePart(byte[] raw) {
        int sep = indexOf(raw, new byte[] {'\r', '\n', '\r', '\n'}, 0);
        String head;
        byte[] body;
        if (raw.length >= 2 && raw[0] == '\r' && raw[1] == '\n') {
            head = "";
            body = Arrays.copyOfRange(raw, 2, raw.length);
        } else if (sep < 0) {
            throw new IllegalArgumentException("part without header/body separator");
        } else {
            head = new String(raw, 0, sep, StandardCharsets.ISO_8859_1);
            body = Arrays.copyOfRange(raw, sep + 4, raw.length);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        String unfolded = head.replaceAll("\r\n[ \t]+", " ");
        for (String line : unfolded.split("\r\n")) {
            if (line.isEmpty()) {
                continue;
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("bad MIME header line: " + line);
            }
            headers.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
        }
        Part p = new Part(headers, body);
        String cte = p.header("Content-Transfer-Encoding");
        if (cte != null && cte.trim().equalsIgnoreCase("base64")) {
            body = Base64.getMimeDecoder().decode(body);
            p = new Part(headers, body);
        } else if (cte != null && !cte.trim().toLowerCase(Locale.ROOT).matches("binary|8bit|7bit")) {
            throw new IllegalArgumentException("unsupported Content-Transfer-Encoding " + cte);
        }
        return p;
    }

    /** Serialises parts (root first) with CRLF line ends and the given boundary. */
    static byte[] write(String boundary, List<Part> parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Part p : parts) {
            write(out, "--" + boundary + "\r\n");
            for (Map.Entry<String, String> h : p.headers().entrySet()) {
                write(out, h.getKey() + ": " + h.getValue() + "\r\n");
            }
            write(out, "\r\n");
            out.writeBytes(p.body());
            write(out, "\r\n");
        }
        write(out, "--" + boundary + "--\r\n");
        return out.toByteArray();
    }

    private static void write(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = Math.max(from, 0); i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
