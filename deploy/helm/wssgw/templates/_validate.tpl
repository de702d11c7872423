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
{{- include "wssgw.validateReplay" . }}
{{- if not (.Values.config.routes) }}
{{- fail "config.routes is empty: wssgw needs at least one route" }}
{{- end }}
{{- end }}

{{/*
The memory replay store is per process: with more than one gateway behind the
Service, a replay sent to another pod is accepted. Refused when a policy checks
replays (replay is on unless a policy says off) and more than one gateway may
run: replicaCount > 1, autoscaling, or a sidecar in another chart's pods (whose
replica count this chart cannot see), unless replay.acknowledgeMemoryStorePerPod.
wssgw.memoryReplayRisk is empty, or says why and which policies (also for NOTES).
*/}}
{{- define "wssgw.memoryReplayRisk" -}}
{{- $store := "memory" }}
{{- with .Values.config.replay }}{{ with .store }}{{ $store = . }}{{ end }}{{ end }}
{{- $checked := list }}
{{- range $name, $p := (.Values.config.policies | default dict) }}
{{- if ne (toString (get ($p | default dict) "replay")) "off" }}{{ $checked = append $checked $name }}{{ end }}
{{- end }}
{{- if and (eq $store "memory") $checked }}
{{- $why := "" }}
{{- if include "wssgw.ownsWorkload" . }}
{{- if .Values.autoscaling.enabled }}
{{- $why = printf "autoscaling.enabled (up to %v pods)" .Values.autoscaling.maxReplicas }}
{{- else if gt (int .Values.replicaCount) 1 }}
{{- $why = printf "replicaCount=%v" .Values.replicaCount }}
{{- end }}
{{- else }}
{{- $why = "mode=sidecar in another chart's pods (their replica count is not known here)" }}
{{- end }}
{{- if $why }}
{{- printf "config.replay.store is memory (one replay store per pod) with %s: a replay of a message accepted by one pod is accepted by another (policies checking replays: %s)" $why (join ", " $checked) }}
{{- end }}
{{- end }}
{{- end }}

{{- define "wssgw.validateReplay" -}}
{{- $risk := include "wssgw.memoryReplayRisk" . }}
{{- if and $risk (not .Values.replay.acknowledgeMemoryStorePerPod) }}
{{- fail (printf "%s. Set config.replay.store=redis with config.replay.redis.addr, or a single gateway (replicaCount=1, autoscaling.enabled=false), or accept per-pod replay detection with replay.acknowledgeMemoryStorePerPod=true" $risk) }}
{{- end }}
{{- end }}
