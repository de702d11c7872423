{{/* Checks the schema cannot express; included by configmap.yaml. */}}
{{- define "wssgw.validate" -}}
{{- $sidecar := eq .Values.mode "sidecar" }}
{{- if and $sidecar .Values.sidecar.native (not (semverCompare ">=1.29.0-0" .Capabilities.KubeVersion.Version)) }}
{{- fail (printf "sidecar.native needs Kubernetes >= 1.29 (native sidecar containers); this cluster is %s: set sidecar.native=false" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- if and $sidecar (not .Values.sidecar.app) .Values.service.enabled (not .Values.sidecar.podSelector) }}
{{- fail "mode=sidecar without sidecar.app: set sidecar.podSelector to the labels of the application's pods (or service.enabled=false)" }}
{{- end }}
{{- if and .Values.warmStart.enabled (not (or .Values.warmStart.configMap .Values.warmStart.secret)) }}
{{- fail "warmStart.enabled needs warmStart.configMap or warmStart.secret (the exported templates)" }}
{{- end }}
{{- if and .Values.warmStart.configMap .Values.warmStart.secret }}
{{- fail "warmStart: set configMap or secret, not both" }}
{{- end }}
{{- $names := dict }}
{{- range .Values.keys }}
{{- if hasKey $names .name }}{{ fail (printf "keys: name %q is used twice" .name) }}{{ end }}
{{- $_ := set $names .name true }}
{{- end }}
{{- if not (.Values.config.routes) }}
{{- fail "config.routes is empty: wssgw needs at least one route" }}
{{- end }}
{{- end }}
