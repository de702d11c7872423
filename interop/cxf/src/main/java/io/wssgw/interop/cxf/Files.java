package io.wssgw.interop.cxf;

import jakarta.jws.WebMethod;
import jakarta.jws.WebParam;
import jakarta.jws.WebResult;
import jakarta.jws.WebService;
import jakarta.jws.soap.SOAPBinding;

/**
 * The code-first service endpoint interface both roles share: one operation that carries a
 * binary attachment each way, so MTOM puts an xop:Include in the Body of the request and of the
 * response. Document/literal bare, so the Body's child is exactly the JAXB element
 * (&lt;f:upload&gt; / &lt;f:uploadResponse&gt;) and a Go backend can answer it without a WSDL.
 */
@WebService(name = "Files", targetNamespace = Files.NS)
@SOAPBinding(parameterStyle = SOAPBinding.ParameterStyle.BARE)
public interface Files {
    /** Namespace of the service and of every element of its messages. */
    String NS = "urn:wssgw:interop:cxf";

    @WebMethod(operationName = "upload")
    @WebResult(name = "uploadResponse", targetNamespace = NS, partName = "receipt")
    Receipt upload(@WebParam(name = "upload", targetNamespace = NS, partName = "upload") Upload upload);
}
