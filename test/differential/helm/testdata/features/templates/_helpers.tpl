{{- define "features.name" -}}
{{ .Chart.Name }}-{{ .Release.Name | trunc 10 }}
{{- end }}
{{- define "shared.name" -}}root-wins{{- end }}
{{- define "features.failing" -}}
{{ fail "features.failing was asked to fail" }}
{{- end }}
