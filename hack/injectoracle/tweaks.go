package main

// The per-case callbacks of upstream's TestInjection, reproduced.
//
// A `mesh` callback mutates the *MeshConfig the test got from the rendered ConfigMap `istio`.
// meshop reads a mesh config as text (a ConfigMap), so each tweak here has two forms: the
// mutation of the proto (what the test does) and an edit of the YAML map (what a user would
// write in the ConfigMap). settings.go applies the edit to the rendered text and checks that
// upstream's own parser (mesh.ApplyMeshConfig) turns the edited text into exactly the mutated
// proto, so the written `mesh` file is proven equivalent to the test's in-memory config.
//
// A `setup` callback flips a process-global feature; these become per-case fields
// (native_sidecars, compliance_policy, openshift) that both engines receive.

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	meshapi "istio.io/api/mesh/v1alpha1"
)

type meshTweak struct {
	name    string
	source  string // squashed source of the callback body in inject_test.go
	mutate  func(m *meshapi.MeshConfig)
	overlay func(raw map[string]any)
}

func child(m map[string]any, key string) map[string]any {
	if c, ok := m[key].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[key] = c
	return c
}

var meshTweaks = []meshTweak{
	{
		name:   "tproxy",
		source: `{m.DefaultConfig.InterceptionMode=meshapi.ProxyConfig_TPROXY}`,
		mutate: func(m *meshapi.MeshConfig) { m.DefaultConfig.InterceptionMode = meshapi.ProxyConfig_TPROXY },
		overlay: func(raw map[string]any) {
			child(raw, "defaultConfig")["interceptionMode"] = "TPROXY"
		},
	},
	{
		name:   "drain-23s",
		source: `{m.DefaultConfig.DrainDuration=durationpb.New(time.Second*23)}`,
		mutate: func(m *meshapi.MeshConfig) { m.DefaultConfig.DrainDuration = durationpb.New(23 * time.Second) },
		overlay: func(raw map[string]any) {
			child(raw, "defaultConfig")["drainDuration"] = "23s"
		},
	},
	{
		name: "tls-client-key-metadata",
		source: `{ifm.DefaultConfig.ProxyMetadata==nil{m.DefaultConfig.ProxyMetadata=map[string]string{}}` +
			`m.DefaultConfig.ProxyMetadata["ISTIO_META_TLS_CLIENT_KEY"]="/etc/identity/client/keys/client-key.pem"}`,
		mutate: func(m *meshapi.MeshConfig) {
			if m.DefaultConfig.ProxyMetadata == nil {
				m.DefaultConfig.ProxyMetadata = map[string]string{}
			}
			m.DefaultConfig.ProxyMetadata["ISTIO_META_TLS_CLIENT_KEY"] = "/etc/identity/client/keys/client-key.pem"
		},
		overlay: func(raw map[string]any) {
			child(child(raw, "defaultConfig"), "proxyMetadata")["ISTIO_META_TLS_CLIENT_KEY"] =
				"/etc/identity/client/keys/client-key.pem"
		},
	},
	{
		name:   "tracing-disabled",
		source: `{m.DefaultConfig.Tracing=&meshapi.Tracing{}}`,
		mutate: func(m *meshapi.MeshConfig) { m.DefaultConfig.Tracing = &meshapi.Tracing{} },
		overlay: func(raw map[string]any) {
			child(raw, "defaultConfig")["tracing"] = map[string]any{}
		},
	},
	{
		name: "inbound-localhost",
		source: `{m.InboundTrafficPolicy=&meshapi.MeshConfig_InboundTrafficPolicy{` +
			`Mode:meshapi.MeshConfig_InboundTrafficPolicy_LOCALHOST,}}`,
		mutate: func(m *meshapi.MeshConfig) {
			m.InboundTrafficPolicy = &meshapi.MeshConfig_InboundTrafficPolicy{Mode: meshapi.MeshConfig_InboundTrafficPolicy_LOCALHOST}
		},
		overlay: func(raw map[string]any) {
			raw["inboundTrafficPolicy"] = map[string]any{"mode": "LOCALHOST"}
		},
	},
	{
		name: "otel-semconv",
		source: `{m.ExtensionProviders=append(m.ExtensionProviders,&meshapi.MeshConfig_ExtensionProvider{Name:"otel",` +
			`Provider:&meshapi.MeshConfig_ExtensionProvider_Opentelemetry{` +
			`Opentelemetry:&meshapi.MeshConfig_ExtensionProvider_OpenTelemetryTracingProvider{` +
			`Service:"otel-collector.observability.svc.cluster.local",Port:4317,` +
			`ServiceAttributeEnrichment:meshapi.MeshConfig_ExtensionProvider_OTEL_SEMANTIC_CONVENTIONS,},},})}`,
		mutate: func(m *meshapi.MeshConfig) {
			m.ExtensionProviders = append(m.ExtensionProviders, &meshapi.MeshConfig_ExtensionProvider{
				Name: "otel",
				Provider: &meshapi.MeshConfig_ExtensionProvider_Opentelemetry{
					Opentelemetry: &meshapi.MeshConfig_ExtensionProvider_OpenTelemetryTracingProvider{
						Service:                    "otel-collector.observability.svc.cluster.local",
						Port:                       4317,
						ServiceAttributeEnrichment: meshapi.MeshConfig_ExtensionProvider_OTEL_SEMANTIC_CONVENTIONS,
					},
				},
			})
		},
		overlay: func(raw map[string]any) {
			list, _ := raw["extensionProviders"].([]any)
			raw["extensionProviders"] = append(list, map[string]any{
				"name": "otel",
				"opentelemetry": map[string]any{
					"service":                    "otel-collector.observability.svc.cluster.local",
					"port":                       4317,
					"serviceAttributeEnrichment": "OTEL_SEMANTIC_CONVENTIONS",
				},
			})
		},
	},
}

func findMeshTweak(source string) (*meshTweak, error) {
	for i := range meshTweaks {
		if meshTweaks[i].source == source {
			return &meshTweaks[i], nil
		}
	}
	return nil, fmt.Errorf("unknown mesh callback %s: add it to hack/injectoracle/tweaks.go", source)
}

// The process-global switches of a case.
type globals struct {
	Native     string // ENABLE_NATIVE_SIDECARS: "auto" (nodes v1.33 and v1.34 → on), "false", "true"
	Compliance string // COMPLIANCE_POLICY
	OpenShift  bool   // PLATFORM=openshift
	Nodes      string // kubelet versions of the fake cluster's nodes, comma-separated
}

func setupGlobals(source string) (globals, error) {
	g := globals{Native: "auto"}
	switch source {
	case "":
	case `{test.SetForTest(t,&features.EnableNativeSidecars,features.NativeSidecarModeDisabled)}`:
		g.Native = "false"
	case `{test.SetForTest(t,&common_features.CompliancePolicy,"fips-140-3")}`:
		g.Compliance = "fips-140-3"
	case `{test.SetEnvForTest(t,platform.Platform.Name,platform.OpenShift)}`:
		g.OpenShift = true
	default:
		return g, fmt.Errorf("unknown setup callback %s: add it to hack/injectoracle/tweaks.go", source)
	}
	return g, nil
}
