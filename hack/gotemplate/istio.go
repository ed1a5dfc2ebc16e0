package main

// Go implementations of the 26 functions of Istio's injection FuncMap, written from their
// documented behaviour (shared/reference/istio-injection.md §3.3), for data decoded from JSON.
//
// Upstream's parameters have Kubernetes/protobuf types (metav1.ObjectMeta, []corev1.Container,
// *meshconfig.ProxyConfig, map[string]string). The oracle's data is map[string]any, so those
// parameters take `any` here and read the map shape that meshop's engine also sees: Go field
// names as keys (ObjectMeta.Annotations, Container.Ports[].ContainerPort, ...). A map passed
// where upstream wants map[string]string must have only string values, otherwise the call
// fails, as Go's type check of the argument would.

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

func istioFuncs() template.FuncMap {
	return template.FuncMap{
		"formatDuration":         istioFormatDuration,
		"isset":                  istioIsset,
		"excludeInboundPort":     istioExcludeInboundPort,
		"includeInboundPorts":    func(cs any) (string, error) { return containerPorts(cs, false) },
		"kubevirtInterfaces":     func(s string) string { return s },
		"excludeInterfaces":      func(s string) string { return s },
		"applicationPorts":       func(cs any) (string, error) { return containerPorts(cs, true) },
		"annotation":             istioAnnotation,
		"valueOrDefault":         istioValueOrDefault,
		"toJSON":                 istioToJSON,
		"fromJSON":               istioFromJSON,
		"structToJSON":           istioStructToJSON,
		"protoToJSON":            istioProtoToJSON,
		"toYaml":                 istioToYaml,
		"indent":                 istioIndent,
		"directory":              istioDirectory,
		"contains":               func(needle, haystack string) bool { return strings.Contains(haystack, needle) },
		"toLower":                strings.ToLower,
		"appendMultusNetwork":    istioAppendMultusNetwork,
		"env":                    istioEnv,
		"omit":                   istioOmit,
		"strdict":                istioStrdict,
		"toJsonMap":              istioToJSONMap,
		"mergeMaps":              istioMergeMaps,
		"omitNil":                istioOmitNil,
		"otelResourceAttributes": istioOtelResourceAttributes,
	}
}

// stringMap views v as Go's map[string]string. nil is the nil map.
func stringMap(v any) (map[string]string, error) {
	switch m := v.(type) {
	case nil:
		return nil, nil
	case map[string]string:
		return m, nil
	case map[string]any:
		out := make(map[string]string, len(m))
		for k, e := range m {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("wrong type for value; expected map[string]string; got %T", v)
			}
			out[k] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("wrong type for value; expected map[string]string; got %T", v)
}

func mapField(v any, key string) any {
	if m, ok := v.(map[string]any); ok {
		return m[key]
	}
	return nil
}

// istioFormatDuration formats a protobuf Duration, given as {"seconds": s, "nanos": n}.
func istioFormatDuration(in any) string {
	secs, _ := mapField(in, "seconds").(float64)
	nanos, _ := mapField(in, "nanos").(float64)
	return (time.Duration(int64(secs))*time.Second + time.Duration(int64(nanos))).String()
}

func istioIsset(m any, key string) (bool, error) {
	sm, err := stringMap(m)
	if err != nil {
		return false, err
	}
	_, present := sm[key]
	return present, nil
}

// istioExcludeInboundPort adds port to a comma-separated list unless it is empty, "0" or
// already listed; the items kept are trimmed and empty ones dropped.
func istioExcludeInboundPort(port any, csv string) string {
	p := strings.TrimSpace(fmt.Sprint(port))
	if p == "" || p == "0" {
		return csv
	}
	var kept []string
	for _, item := range strings.Split(csv, ",") {
		if item == p {
			return csv
		}
		if t := strings.TrimSpace(item); t != "" {
			kept = append(kept, t)
		}
	}
	return strings.Join(append(kept, p), ",")
}

// containerPorts lists the TCP container ports (UDP and SCTP skipped) of the containers,
// comma-separated; skipProxy leaves out the container named istio-proxy.
func containerPorts(cs any, skipProxy bool) (string, error) {
	list, ok := cs.([]any)
	if cs != nil && !ok {
		return "", fmt.Errorf("wrong type for value; expected []v1.Container; got %T", cs)
	}
	var out []string
	for _, c := range list {
		if skipProxy && mapField(c, "Name") == "istio-proxy" {
			continue
		}
		ports, _ := mapField(c, "Ports").([]any)
		for _, p := range ports {
			proto, _ := mapField(p, "Protocol").(string)
			if proto == "UDP" || proto == "SCTP" {
				continue
			}
			n, _ := mapField(p, "ContainerPort").(float64)
			out = append(out, strconv.Itoa(int(int32(n))))
		}
	}
	return strings.Join(out, ","), nil
}

// istioAnnotation returns meta.Annotations[name] when present (even empty), else the
// default printed with fmt.Sprint.
func istioAnnotation(meta any, name string, def any) (string, error) {
	if meta != nil {
		if _, ok := meta.(map[string]any); !ok {
			return "", fmt.Errorf("wrong type for value; expected v1.ObjectMeta; got %T", meta)
		}
	}
	anns, err := stringMap(mapField(meta, "Annotations"))
	if err != nil {
		return "", err
	}
	if v, ok := anns[name]; ok {
		return v, nil
	}
	return fmt.Sprint(def), nil
}

func istioValueOrDefault(v any, def any) any {
	if v == nil {
		return def
	}
	if s, ok := v.(string); ok && s == "" {
		return def
	}
	return v
}

func istioToJSON(m any) (string, error) {
	sm, err := stringMap(m)
	if err != nil {
		return "", err
	}
	if sm == nil {
		return "{}", nil
	}
	b, err := json.Marshal(sm)
	if err != nil {
		return "{}", nil
	}
	return string(b), nil
}

// istioFromJSON decodes JSON; on bad input it yields the string "{}".
func istioFromJSON(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return "{}"
	}
	return v
}

func istioStructToJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// istioProtoToJSON: upstream strips ProxyConfig defaults and prints jsonpb. With map data
// there is no message type, so this is compact JSON of the map (nil gives "{}").
func istioProtoToJSON(v any) string {
	return istioStructToJSON(v)
}

func istioToYaml(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// istioIndent pads every line but the first with n spaces.
func istioIndent(n int, s string) string {
	lines := strings.Split(s, "\n")
	// Upstream pads with fmt's "% Ns", so a negative N pads |N| spaces too.
	if n < 0 {
		n = -n
	}
	pad := strings.Repeat(" ", n)
	for i := 1; i < len(lines); i++ {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n")
}

// istioDirectory is the directory part of a slash path, trailing slash kept.
func istioDirectory(p string) string {
	return p[:strings.LastIndex(p, "/")+1]
}

func istioEnv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// istioAppendMultusNetwork adds network ("[ns/]name") to a Multus networks annotation value,
// which is either comma-separated names or a JSON array of {"name","namespace"} objects.
func istioAppendMultusNetwork(existing, network string) string {
	if existing == "" {
		return network
	}
	end := strings.LastIndex(existing, "]")
	if end < 0 {
		for _, n := range strings.Split(existing, ",") {
			if strings.TrimSpace(n) == network {
				return existing
			}
		}
		return existing + ", " + network
	}
	var nets []map[string]any
	if json.Unmarshal([]byte(existing), &nets) != nil {
		return existing
	}
	ns, name := "", network
	if parts := strings.Split(network, "/"); len(parts) >= 2 {
		ns, name = parts[0], parts[1]
	}
	for _, n := range nets {
		if n["name"] != name {
			continue
		}
		have := n["namespace"]
		if have == nil {
			have = ""
		}
		if have == ns {
			return existing
		}
	}
	entry := fmt.Sprintf(`, {"name": "%s"}`, name)
	if ns != "" {
		entry = fmt.Sprintf(`, {"name": "%s", "namespace": "%s"}`, name, ns)
	}
	return existing[:end] + entry + existing[end:]
}

func istioOmit(m any, keys ...string) (map[string]string, error) {
	sm, err := stringMap(m)
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	out := map[string]string{}
	for k, v := range sm {
		if !drop[k] {
			out[k] = v
		}
	}
	return out, nil
}

// istioStrdict is sprig's dict with string values; a key without a value maps to "".
func istioStrdict(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		if i+1 < len(kv) {
			out[kv[i]] = kv[i+1]
		} else {
			out[kv[i]] = ""
		}
	}
	return out
}

// istioMergeMaps merges string maps, later ones winning; no maps gives nil.
func istioMergeMaps(ms ...any) (map[string]string, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, m := range ms {
		sm, err := stringMap(m)
		if err != nil {
			return nil, err
		}
		for k, v := range sm {
			out[k] = v
		}
	}
	return out, nil
}

func istioToJSONMap(ms ...any) (string, error) {
	m, err := istioMergeMaps(ms...)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(m)
	return string(b), nil
}

// istioOmitNil drops nil entries from maps and lists, recursively; a collection that ends
// up empty because of that becomes nil itself. Collections without nils are returned as is
// (so an originally empty map stays an empty map).
func istioOmitNil(v any) any {
	out, _ := omitNilRec(v)
	return out
}

func omitNilRec(v any) (any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case map[string]any:
		changed := false
		out := make(map[string]any, len(t))
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e, c := omitNilRec(t[k])
			changed = changed || c
			if e != nil {
				out[k] = e
			}
		}
		if !changed {
			return t, false
		}
		if len(out) == 0 {
			return nil, true
		}
		return out, true
	case []any:
		changed := false
		out := make([]any, 0, len(t))
		for _, e := range t {
			f, c := omitNilRec(e)
			changed = changed || c
			if f != nil {
				out = append(out, f)
			}
		}
		if !changed {
			return t, false
		}
		if len(out) == 0 {
			return nil, true
		}
		return out, true
	}
	return v, false
}

// istioOtelResourceAttributes builds OTEL_RESOURCE_ATTRIBUTES when some extension provider of
// the mesh config has opentelemetry.serviceAttributeEnrichment OTEL_SEMANTIC_CONVENTIONS.
// Map shape: mesh.ExtensionProviders[].Opentelemetry.ServiceAttributeEnrichment,
// containers[].Name / .Image.
func istioOtelResourceAttributes(mesh any, annotations any, labels any, namespace string, containers any) (string, error) {
	anns, err := stringMap(annotations)
	if err != nil {
		return "", err
	}
	lbls, err := stringMap(labels)
	if err != nil {
		return "", err
	}
	enabled := false
	providers, _ := mapField(mesh, "ExtensionProviders").([]any)
	for _, p := range providers {
		if mapField(mapField(p, "Opentelemetry"), "ServiceAttributeEnrichment") == "OTEL_SEMANTIC_CONVENTIONS" {
			enabled = true
			break
		}
	}
	if !enabled {
		return "", nil
	}
	cs, _ := containers.([]any)
	var attrs []string
	if v := anns["resource.opentelemetry.io/service.namespace"]; v != "" {
		attrs = append(attrs, "service.namespace="+v)
	} else if namespace != "" {
		attrs = append(attrs, "service.namespace="+namespace)
	}
	if v := anns["resource.opentelemetry.io/service.version"]; v != "" {
		attrs = append(attrs, "service.version="+v)
	} else if v := lbls["app.kubernetes.io/version"]; v != "" {
		attrs = append(attrs, "service.version="+v)
	} else if len(cs) == 1 {
		image, _ := mapField(cs[0], "Image").(string)
		tag, digest := imageTagDigest(image)
		switch {
		case tag != "" && digest != "":
			attrs = append(attrs, "service.version="+tag+"@"+digest)
		case digest != "":
			attrs = append(attrs, "service.version="+digest)
		case tag != "":
			attrs = append(attrs, "service.version="+tag)
		}
	}
	if v := anns["resource.opentelemetry.io/service.instance.id"]; v != "" {
		attrs = append(attrs, "service.instance.id="+v)
	} else if len(cs) > 0 {
		name, _ := mapField(cs[0], "Name").(string)
		attrs = append(attrs, "service.instance.id="+namespace+".$(POD_NAME)."+name)
	}
	return strings.Join(attrs, ","), nil
}

// imageTagDigest splits [registry[:port]/]name[:tag][@digest].
func imageTagDigest(image string) (tag, digest string) {
	if at := strings.Index(image, "@"); at >= 0 {
		image, digest = image[:at], image[at+1:]
	}
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
		tag = image[colon+1:]
	}
	return tag, digest
}
