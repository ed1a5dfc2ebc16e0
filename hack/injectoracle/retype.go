package main

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"istio.io/istio/pkg/kube/inject"
)

// retypeDocument gives one YAML document as upstream's kube-inject (IntoResourceFile) would
// write it if injection changed nothing: decoded into the typed object of its kind through
// inject.FromRawToObject (List items one by one) and written by yaml.Marshal. A kind
// kube-inject does not know is written unchanged, as upstream does. The golden runner uses it
// to tell Go's typed re-encoding (status: {}, strategy: {}, resources: {}, dropped zero
// values) from a difference in content.
func retypeDocument(raw []byte) (string, bool, error) {
	obj, err := inject.FromRawToObject(raw)
	if runtime.IsNotRegisteredError(err) {
		return string(raw), false, nil
	}
	if err != nil {
		return "", false, err
	}
	if list, ok := obj.(*corev1.List); ok {
		for i, item := range list.Items {
			o, err := inject.FromRawToObject(item.Raw)
			if runtime.IsNotRegisteredError(err) {
				continue
			}
			if err != nil {
				return "", false, err
			}
			list.Items[i] = runtime.RawExtension{Object: o}
		}
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return "", false, err
	}
	return string(out), true, nil
}

func cmdRetype(args []string) error {
	return lines(func(line []byte) any {
		var req struct {
			YAML string `json:"yaml"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return map[string]string{"error": "not a {\"yaml\": ...} line: " + err.Error()}
		}
		text, typed, err := retypeDocument([]byte(req.YAML))
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		return map[string]any{"yaml": text, "typed": typed}
	})
}
