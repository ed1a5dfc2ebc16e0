package main

// sidecar-data builds the data for rendering upstream's injection templates: the
// sidecarInjectorWebhook "values" the istio-discovery chart writes into its ConfigMap
// (picked from the chart's values.yaml defaults, as templates/istiod-injector-configmap.yaml
// does), merged under a fixture of pod metadata, spec, proxy and mesh config in map shape
// (Go field names as keys, since the templates address them that way).

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func runSidecarData(args []string) error {
	fs := flag.NewFlagSet("sidecar-data", flag.ExitOnError)
	valuesPath := fs.String("values", "", "istio-discovery chart values.yaml")
	fixturePath := fs.String("fixture", "", "JSON fixture: template data without Values, plus optional ValuesOverlay")
	out := fs.String("out", "-", "output JSON")
	_ = fs.Parse(args)

	raw, err := os.ReadFile(*valuesPath)
	if err != nil {
		return err
	}
	var chart map[string]any
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		return fmt.Errorf("%s: %v", *valuesPath, err)
	}
	defaults, _ := chart["_internal_defaults_do_not_set"].(map[string]any)
	if defaults == nil {
		defaults = chart
	}
	pick := func(m any, keys ...string) map[string]any {
		res := map[string]any{}
		mm, _ := m.(map[string]any)
		for _, k := range keys {
			if v, ok := mm[k]; ok {
				res[k] = v
			}
		}
		return res
	}
	values := pick(defaults, "global", "sidecarInjectorWebhook", "revision")
	values["pilot"] = pick(defaults, "cni", "env")
	values["gateways"] = pick(defaults["gateways"], "securityContext", "seccompProfile")

	fraw, err := os.ReadFile(*fixturePath)
	if err != nil {
		return err
	}
	var fixture map[string]any
	if err := json.Unmarshal(fraw, &fixture); err != nil {
		return fmt.Errorf("%s: %v", *fixturePath, err)
	}
	if overlay, ok := fixture["ValuesOverlay"].(map[string]any); ok {
		deepMerge(values, overlay)
		delete(fixture, "ValuesOverlay")
	}
	// The ConfigMap carries the values as JSON text that the injector decodes again:
	// round-trip so that numbers are float64 and nothing typed survives.
	b, _ := json.Marshal(values)
	var decoded any
	_ = json.Unmarshal(b, &decoded)
	fixture["Values"] = decoded

	w, err := openOut(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	return enc.Encode(fixture)
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				deepMerge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
