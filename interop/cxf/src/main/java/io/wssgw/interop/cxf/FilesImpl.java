package io.wssgw.interop.cxf;

import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.activation.DataHandler;
import jakarta.jws.WebService;

import io.wssgw.interop.peer.Json;

import org.apache.cxf.attachment.ByteDataSource;

/** The service role's implementation: a receipt for the file, and the file sent back. */
@WebService(endpointInterface = "io.wssgw.interop.cxf.Files", targetNamespace = Files.NS,
    serviceName = "FilesService", portName = "FilesPort")
public class FilesImpl implements Files {
    private final PrintStream events;

    FilesImpl(PrintStream events) {
        this.events = events;
    }

    @Override
    public Receipt upload(Upload upload) {
        byte[] b;
        try {
            b = CxfClient.read(upload.data);
        } catch (IOException e) {
            throw new IllegalStateException("reading the upload: " + e.getMessage(), e);
        }
        Receipt r = new Receipt();
        r.name = upload.name;
        r.size = b.length;
        r.sha256 = CxfClient.sha256(b);
        r.data = new DataHandler(new ByteDataSource(b, "application/octet-stream"));
        // One line per request that passed WSS4J and reached the implementation.
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("event", "upload");
        ev.put("name", r.name);
        ev.put("size", r.size);
        ev.put("sha256", r.sha256);
        synchronized (events) {
            events.println(Json.write(ev));
            events.flush();
        }
        return r;
    }
}
