{{/* Names, labels and the pieces every pod of the chart shares. */}}

{{- define "llmgw.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "llmgw.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "llmgw.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "llmgw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (dict "ctx" $ "component" "gateway"). */}}
{{- define "llmgw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llmgw.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "llmgw.componentLabels" -}}
{{ include "llmgw.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "llmgw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "llmgw.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "llmgw.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The Secret with the shared tokens: the operator's or the chart's. */}}
{{- define "llmgw.secretName" -}}
{{- default (printf "%s-secrets" (include "llmgw.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "llmgw.controlAddress" -}}
{{- default (printf "%s-control:%d" (include "llmgw.fullname" .) (int .Values.gateway.controlService.port)) .Values.agent.controlAddress -}}
{{- end -}}

{{/* Checks made once, with messages that say what to set. */}}
{{- define "llmgw.validate" -}}
{{- if not .Values.temporal.address -}}
{{- fail "temporal.address is required: host:port of your Temporal frontend (docs/install.md, Kubernetes (Helm))" -}}
{{- end -}}
{{- if and (not .Values.database.url) (not .Values.database.existingSecret) -}}
{{- fail "database.url or database.existingSecret is required: llmgw's PostgreSQL" -}}
{{- end -}}
{{- if and (not .Values.redis.url) (not .Values.redis.existingSecret) -}}
{{- fail "redis.url or redis.existingSecret is required: llmgw's Redis" -}}
{{- end -}}
{{- if and .Values.temporal.tls.certKey (not .Values.temporal.tls.keyKey) -}}
{{- fail "temporal.tls.certKey and temporal.tls.keyKey go together (mutual TLS)" -}}
{{- end -}}
{{- if and (or .Values.temporal.tls.caKey .Values.temporal.tls.certKey) (not .Values.temporal.tls.existingSecret) -}}
{{- fail "temporal.tls.caKey/certKey name keys of temporal.tls.existingSecret, which is not set" -}}
{{- end -}}
{{- if and .Values.tls.ca.keyKey (not .Values.tls.ca.existingSecret) -}}
{{- fail "tls.ca.keyKey names a key of tls.ca.existingSecret, which is not set" -}}
{{- end -}}
{{- if and .Values.tls.controlPlane.existingSecret (not .Values.tls.ca.existingSecret) -}}
{{- fail "tls.controlPlane.existingSecret needs tls.ca.existingSecret (the CA that issued it)" -}}
{{- end -}}
{{- if and .Values.tls.insecure (or .Values.tls.ca.existingSecret .Values.tls.controlPlane.existingSecret) -}}
{{- fail "tls.insecure turns the agent protocol's TLS off, yet tls.ca or tls.controlPlane is set" -}}
{{- end -}}
{{- end -}}

{{/* Environment from the shared Secret and the store's Secrets: the control plane's. */}}
{{- define "llmgw.controlPlaneSecretEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ default (printf "%s-store" (include "llmgw.fullname" .)) .Values.database.existingSecret }}
      key: {{ ternary .Values.database.existingSecretKey "DATABASE_URL" (ne .Values.database.existingSecret "") }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ default (printf "%s-store" (include "llmgw.fullname" .)) .Values.redis.existingSecret }}
      key: {{ ternary .Values.redis.existingSecretKey "REDIS_URL" (ne .Values.redis.existingSecret "") }}
{{- range list "LLMGW_CLUSTER_TOKEN" "LLMGW_ADMIN_TOKEN" "LLMGW_NOTIFY_SECRET" "LLMGW_THINKING_SECRET" }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ include "llmgw.secretName" $ }}
      key: {{ . }}
{{- end }}
{{- end -}}

{{/* TLS settings of the control plane: Temporal's and the agent protocol's, as files. */}}
{{- define "llmgw.controlPlaneTlsEnv" -}}
{{- $t := .Values.temporal.tls -}}
{{- if $t.enabled }}
- name: TEMPORAL_TLS
  value: "1"
{{- end }}
{{- if $t.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ $t.serverName | quote }}
{{- end }}
{{- if $t.caKey }}
- name: TEMPORAL_TLS_CA_FILE
  value: /etc/llmgw/temporal-tls/{{ $t.caKey }}
{{- end }}
{{- if $t.certKey }}
- name: TEMPORAL_TLS_CERT_FILE
  value: /etc/llmgw/temporal-tls/{{ $t.certKey }}
- name: TEMPORAL_TLS_KEY_FILE
  value: /etc/llmgw/temporal-tls/{{ $t.keyKey }}
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY_FILE
  value: /etc/llmgw/temporal-api-key/{{ .Values.temporal.apiKey.key }}
{{- end }}
{{- if .Values.tls.ca.existingSecret }}
- name: LLMGW_TLS_CA_FILE
  value: /etc/llmgw/tls/ca/{{ .Values.tls.ca.certKey }}
{{- if .Values.tls.ca.keyKey }}
- name: LLMGW_TLS_CA_KEY_FILE
  value: /etc/llmgw/tls/ca/{{ .Values.tls.ca.keyKey }}
{{- end }}
{{- end }}
{{- if .Values.tls.controlPlane.existingSecret }}
- name: LLMGW_TLS_CERT_FILE
  value: /etc/llmgw/tls/control/tls.crt
- name: LLMGW_TLS_KEY_FILE
  value: /etc/llmgw/tls/control/tls.key
{{- end }}
{{- end -}}

{{/* Mounts for the control plane: writable data and /tmp on a read-only root, and TLS files. */}}
{{- define "llmgw.controlPlaneMounts" -}}
- name: data
  mountPath: /var/lib/llmgw
- name: tmp
  mountPath: /tmp
{{- if .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  mountPath: /etc/llmgw/temporal-tls
  readOnly: true
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: temporal-api-key
  mountPath: /etc/llmgw/temporal-api-key
  readOnly: true
{{- end }}
{{- if .Values.tls.ca.existingSecret }}
- name: tls-ca
  mountPath: /etc/llmgw/tls/ca
  readOnly: true
{{- end }}
{{- if .Values.tls.controlPlane.existingSecret }}
- name: tls-control
  mountPath: /etc/llmgw/tls/control
  readOnly: true
{{- end }}
{{- end -}}

{{- define "llmgw.controlPlaneVolumes" -}}
- name: data
{{- if .Values.sharedData.enabled }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-data" (include "llmgw.fullname" .)) .Values.sharedData.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
- name: tmp
  emptyDir: {}
{{- if .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: temporal-api-key
  secret:
    secretName: {{ .Values.temporal.apiKey.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- if .Values.tls.ca.existingSecret }}
- name: tls-ca
  secret:
    secretName: {{ .Values.tls.ca.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- if .Values.tls.controlPlane.existingSecret }}
- name: tls-control
  secret:
    secretName: {{ .Values.tls.controlPlane.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- end -}}

{{/* Rolls the pods when the settings change (not on a Secret's change: no hash of a secret is shown). */}}
{{- define "llmgw.configChecksum" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- end -}}

{{/* LLMGW_NODE_LABELS from a map: k=v,k=v in key order. */}}
{{- define "llmgw.nodeLabels" -}}
{{- $pairs := list -}}
{{- range $k, $v := . -}}
{{- $pairs = append $pairs (printf "%s=%v" $k $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* Where agents run: the operator's selector, else GPU nodes as the NVIDIA GPU Operator labels them. */}}
{{- define "llmgw.agentNodeSelector" -}}
{{- toYaml (.Values.agent.nodeSelector | default (dict "nvidia.com/gpu.present" "true")) -}}
{{- end -}}
