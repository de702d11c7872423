package io.wssgw.interop.cxf;

import jakarta.activation.DataHandler;
import jakarta.xml.bind.annotation.XmlAccessType;
import jakarta.xml.bind.annotation.XmlAccessorType;
import jakarta.xml.bind.annotation.XmlElement;
import jakarta.xml.bind.annotation.XmlMimeType;
import jakarta.xml.bind.annotation.XmlType;

/** The response: what the service received (size, SHA-256 hex) and the file sent back. */
@XmlAccessorType(XmlAccessType.FIELD)
@XmlType(name = "Receipt", namespace = Files.NS, propOrder = {"name", "size", "sha256", "data"})
public class Receipt {
    @XmlElement(namespace = Files.NS, required = true)
    public String name;

    @XmlElement(namespace = Files.NS)
    public long size;

    @XmlElement(namespace = Files.NS, required = true)
    public String sha256;

    @XmlElement(namespace = Files.NS)
    @XmlMimeType("application/octet-stream")
    public DataHandler data;
}
