{{/*
Names. Another chart that has wssgw as a subchart can include the sidecar
templates at the end of this file with .Subcharts.wssgw as the context.
*/}}
{{- define "wssgw.name" -}}
{{- default "wssgw" .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "wssgw.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "wssgw.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "wssgw.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "wssgw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "wssgw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "wssgw.labels" -}}
helm.sh/chart: {{ include "wssgw.chart" . }}
{{ include "wssgw.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: gateway
{{- end }}

{{/* Pods the Service selects: ours (standalone, or sidecar with sidecar.app),
or the application's pods wssgw was added to (sidecar.podSelector). */}}
{{- define "wssgw.podSelector" -}}
{{- if and (eq .Values.mode "sidecar") (not .Values.sidecar.app) .Values.sidecar.podSelector }}
{{- toYaml .Values.sidecar.podSelector }}
{{- else }}
{{- include "wssgw.selectorLabels" . }}
{{- end }}
{{- end }}

{{/* Whether this chart renders the Deployment. */}}
{{- define "wssgw.ownsWorkload" -}}
{{- if or (eq .Values.mode "standalone") .Values.sidecar.app }}true{{ end }}
{{- end }}

{{- define "wssgw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "wssgw.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "wssgw.image" -}}
{{- $tag := .Values.image.tag | default (.Chart.AppVersion | default "latest") -}}
{{- /* The openssl variant (issue 18) is the same release tagged <tag>-openssl. */ -}}
{{- if .Values.image.variant }}{{ $tag = printf "%s-%s" $tag .Values.image.variant }}{{ end -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* Where things are mounted in the container. */}}
{{- define "wssgw.configDir" -}}/etc/wssgw/config{{- end }}
{{- define "wssgw.keysDir" -}}/etc/wssgw/keys{{- end }}
{{- define "wssgw.templatesDir" -}}/etc/wssgw/templates{{- end }}

{{/* Name of the Secret behind keys entry (dict "root" $ "key" $k). */}}
{{- define "wssgw.keySecretName" -}}
{{- if .key.existingSecret }}
{{- .key.existingSecret }}
{{- else }}
{{- printf "%s-%s" (include "wssgw.fullname" .root) .key.name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
The whole wssgw configuration: .Values.config with the listen addresses taken
from .Values.ports (so probes, Service and ServiceMonitor agree), admin.templates
explicit (false unless set) and, with warmStart, templates.importFile pointing at
the mounted export.
*/}}
{{- define "wssgw.config" -}}
{{- $c := deepCopy (.Values.config | default dict) }}
{{- $_ := set $c "listen" (printf ":%d" (int .Values.ports.data)) }}
{{- $admin := get $c "admin" | default dict }}
{{- $_ := set $admin "listen" (printf ":%d" (int .Values.ports.admin)) }}
{{- /* Rendered explicitly: the templates API is off unless a value enables it. */}}
{{- $_ := set $admin "templates" (get $admin "templates" | default false) }}
{{- $_ := set $c "admin" $admin }}
{{- if .Values.warmStart.enabled }}
{{- $t := get $c "templates" | default dict }}
{{- $_ := set $t "importFile" (printf "%s/%s" (include "wssgw.templatesDir" .) .Values.warmStart.key) }}
{{- $_ := set $c "templates" $t }}
{{- end }}
{{- toYaml $c }}
{{- end }}

{{/* Pod annotations that roll pods when the configuration or demo Secrets change. */}}
{{- define "wssgw.checksums" -}}
checksum/wssgw-config: {{ include "wssgw.config" . | sha256sum }}
{{- $created := list }}
{{- range .Values.keys }}{{ if not .existingSecret }}{{ $created = append $created .stringData }}{{ end }}{{ end }}
{{- if $created }}
checksum/wssgw-keys: {{ toJson $created | sha256sum }}
{{- end }}
{{- end }}

{{/*
The wssgw container. With .native (a bool in the dict form) it is a native
sidecar: an init container with restartPolicy Always (Kubernetes >= 1.29).
Call with the chart context plus "native": (merge (dict "native" true) .).
*/}}
{{- define "wssgw.container" -}}
- name: {{ .Values.containerName }}
  image: {{ include "wssgw.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if .native }}
  restartPolicy: Always
  {{- end }}
  args:
    - serve
    - --config
    - {{ include "wssgw.configDir" . }}/config.yaml
  ports:
    - name: soap
      containerPort: {{ int .Values.ports.data }}
      protocol: TCP
    - name: admin
      containerPort: {{ int .Values.ports.admin }}
      protocol: TCP
  {{- $gml := include "wssgw.goMemLimit" . }}
  {{- if or $gml .Values.extraEnv }}
  env:
    {{- if $gml }}
    - name: GOMEMLIMIT
      value: {{ $gml | quote }}
    {{- end }}
    {{- with .Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
  {{- if .Values.probes.startup.enabled }}
  startupProbe:
    httpGet:
      path: /readyz
      port: admin
    {{- toYaml (omit .Values.probes.startup "enabled") | nindent 4 }}
  {{- end }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: admin
    {{- toYaml .Values.probes.liveness | nindent 4 }}
  readinessProbe:
    httpGet:
      path: /readyz
      port: admin
    {{- toYaml .Values.probes.readiness | nindent 4 }}
  {{- with .Values.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
    - name: wssgw-config
      mountPath: {{ include "wssgw.configDir" . }}
      readOnly: true
    - name: wssgw-tmp
      mountPath: /tmp
    {{- range .Values.keys }}
    - name: wssgw-key-{{ .name }}
      mountPath: {{ include "wssgw.keysDir" $ }}/{{ .name }}
      readOnly: true
    {{- end }}
    {{- if .Values.warmStart.enabled }}
    - name: wssgw-templates
      mountPath: {{ include "wssgw.templatesDir" . }}
      readOnly: true
    {{- end }}
    {{- with .Values.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}

{{/*
GOMEMLIMIT of the wssgw container: goMemLimit.value when set ("off": none),
else goMemLimit.percent of resources.limits.memory in MiB (none without a
limit, or when extraEnv sets GOMEMLIMIT itself). Computed here rather than
with the downward API: resourceFieldRef gives the whole limit (a number, no
percentage), and the node's allocatable memory when the limit is missing.
*/}}
{{- define "wssgw.goMemLimit" -}}
{{- $g := .Values.goMemLimit }}
{{- $own := false }}
{{- range .Values.extraEnv }}{{ if eq .name "GOMEMLIMIT" }}{{ $own = true }}{{ end }}{{ end }}
{{- if or $own (eq (toString $g.value) "off") }}
{{- else if $g.value }}
{{- $g.value }}
{{- else }}
{{- $limit := "" }}
{{- with .Values.resources }}{{ with .limits }}{{ with get . "memory" }}{{ $limit = toString . }}{{ end }}{{ end }}{{ end }}
{{- if $limit }}
{{- $m := regexFindAll "^([0-9]+(?:\\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$" $limit 1 }}
{{- if not $m }}
{{- fail (printf "resources.limits.memory %q: goMemLimit cannot derive GOMEMLIMIT from it (units Ki, Mi, Gi, Ti, k, M, G, T); set goMemLimit.value (e.g. 230MiB, or off)" $limit) }}
{{- end }}
{{- $num := regexReplaceAll "[A-Za-z]+$" $limit "" | float64 }}
{{- $unit := regexReplaceAll "^[0-9.]+" $limit "" }}
{{- $mult := dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "k" 1000.0 "K" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 }}
{{- $bytes := mulf $num (get $mult $unit) }}
{{- $mib := divf (mulf $bytes (float64 $g.percent)) (mulf 100.0 1048576.0) | floor | int64 }}
{{- if lt $mib 1 }}
{{- fail (printf "resources.limits.memory %q is too small for GOMEMLIMIT: set goMemLimit.value" $limit) }}
{{- end }}
{{- printf "%dMiB" $mib }}
{{- end }}
{{- end }}
{{- end }}

{{/* The volumes the wssgw container mounts. */}}
{{- define "wssgw.volumes" -}}
- name: wssgw-config
  configMap:
    name: {{ include "wssgw.fullname" . }}
- name: wssgw-tmp
  emptyDir:
    {{- with .Values.spool.medium }}
    medium: {{ . }}
    {{- end }}
    {{- with .Values.spool.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- range .Values.keys }}
- name: wssgw-key-{{ .name }}
  secret:
    secretName: {{ include "wssgw.keySecretName" (dict "root" $ "key" .) }}
    defaultMode: 288  # 0440
{{- end }}
{{- if .Values.warmStart.enabled }}
- name: wssgw-templates
  {{- if .Values.warmStart.secret }}
  secret:
    secretName: {{ .Values.warmStart.secret }}
    defaultMode: 288  # 0440
  {{- else }}
  configMap:
    name: {{ .Values.warmStart.configMap }}
  {{- end }}
{{- end }}
{{- with .Values.extraVolumes }}
{{- toYaml . | nindent 0 }}
{{- end }}
{{- end }}

{{/*
For another chart that has wssgw as a subchart: the sidecar container, its
volumes and the pod annotations, rendered in the subchart's own context:
  initContainers:   # or containers, with wssgw.sidecar.native=false
    {{- include "wssgw.sidecar.container" .Subcharts.wssgw | nindent 8 }}
  volumes:
    {{- include "wssgw.sidecar.volumes" .Subcharts.wssgw | nindent 8 }}
*/}}
{{- define "wssgw.sidecar.container" -}}
{{- include "wssgw.container" (merge (dict "native" .Values.sidecar.native) .) }}
{{- end }}

{{- define "wssgw.sidecar.volumes" -}}
{{- include "wssgw.volumes" . }}
{{- end }}

{{- define "wssgw.sidecar.podAnnotations" -}}
{{- include "wssgw.checksums" . }}
{{- end }}
