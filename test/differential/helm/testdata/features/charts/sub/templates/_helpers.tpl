{{- define "shared.name" -}}sub-loses{{- end }}
{{- define "sub.only" -}}sub-only-{{ .Values.own }}{{- end }}
