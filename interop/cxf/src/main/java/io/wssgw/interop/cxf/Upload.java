package io.wssgw.interop.cxf;

import jakarta.activation.DataHandler;
import jakarta.xml.bind.annotation.XmlAccessType;
import jakarta.xml.bind.annotation.XmlAccessorType;
import jakarta.xml.bind.annotation.XmlElement;
import jakarta.xml.bind.annotation.XmlMimeType;
import jakarta.xml.bind.annotation.XmlType;

/** The request: a name and the file, an MTOM attachment when MTOM is on (base64 inline otherwise). */
@XmlAccessorType(XmlAccessType.FIELD)
@XmlType(name = "Upload", namespace = Files.NS, propOrder = {"name", "data"})
public class Upload {
    @XmlElement(namespace = Files.NS, required = true)
    public String name;

    @XmlElement(namespace = Files.NS, required = true)
    @XmlMimeType("application/octet-stream")
    public DataHandler data;
}
