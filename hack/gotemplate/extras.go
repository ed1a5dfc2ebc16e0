package main

// Functions the issue asks meshop to provide that neither sprig nor Istio's FuncMap has.
// They follow Helm's definitions, the de-facto standard for these names: `required`
// fails with the message when the value is nil or "", `fromYaml` decodes with
// sigs.k8s.io/yaml into map[string]any and on failure returns {"Error": message}.
// Istio's toYaml (registered later) replaces Helm's.

import (
	"errors"
	"text/template"

	"sigs.k8s.io/yaml"
)

func extraFuncs() template.FuncMap {
	return template.FuncMap{
		"required": func(msg string, v any) (any, error) {
			if v == nil {
				return v, errors.New(msg)
			}
			if s, ok := v.(string); ok && s == "" {
				return v, errors.New(msg)
			}
			return v, nil
		},
		"fromYaml": func(s string) map[string]any {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
	}
}
