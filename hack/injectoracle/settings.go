package main

// `injectoracle settings --out DIR`: the injector settings of every TestInjection and
// TestInjectionOlderVersion case, as getInjectionSettings renders them, plus the webhook-path pods of every case and a self-check
// that upstream's injector, fed these files, reproduces the goldens.
//
// DIR/cases.json                       one entry per case (see caseEntry)
// DIR/settings/<id>/{config,values,mesh}  ConfigMap texts, deduplicated (id "default" = no
//                                      setFlags, no overlay, no mesh tweak)
// DIR/pods/<case>.jsonl                one line per input part: {"namespace", "pod", "want"}
//                                      `pod` is what objectToPod gives for the input, `want`
//                                      the normalised objectToPod(golden) (absent for errors)

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	meshapi "istio.io/api/mesh/v1alpha1"
	"sigs.k8s.io/yaml"

	"istio.io/istio/operator/pkg/render"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/kube/inject"
)

type caseEntry struct {
	Index            int      `json:"index"`
	Name             string   `json:"name"`
	UpstreamName     string   `json:"upstream_name"` // go test -run name
	Test             string   `json:"test"`
	Input            string   `json:"input"`
	Golden           string   `json:"golden,omitempty"`
	Settings         string   `json:"settings"`
	SetFlags         []string `json:"set_flags,omitempty"`
	IOP              string   `json:"iop,omitempty"`
	MeshTweak        string   `json:"mesh_tweak,omitempty"`
	NativeSidecars   string   `json:"native_sidecars"`
	CompliancePolicy string   `json:"compliance_policy"`
	OpenShift        bool     `json:"openshift"`
	// Kubelet versions of the fake cluster's nodes (what native "auto" decides from).
	NodeKubeletVersions []string `json:"node_kubelet_versions"`
	Revision            string   `json:"revision"`
	ExpectError         string   `json:"expect_error,omitempty"`
	ExpectedLog         string   `json:"expected_log,omitempty"`
	WebhookPath         bool     `json:"webhook_path"`
	KubeInjectPath      bool     `json:"kube_inject_path"`
	Pods                string   `json:"pods"` // relative to DIR
	Parts               int      `json:"parts"`
	Notes               []string `json:"notes,omitempty"`
	// Self-check: does upstream's injector, with exactly these files, give the golden?
	OracleCheck string `json:"oracle_check"`
}

type casesFile struct {
	IstioDir      string      `json:"istio_dir"`
	IstioVersion  string      `json:"istio_version"`
	Oracle        string      `json:"oracle"`
	SettingsCount int         `json:"settings_count"`
	Cases         []caseEntry `json:"cases"`
}

type rendered struct{ config, values, mesh string }

func renderSettings(istioDir string, setFlags []string, iop string) (rendered, error) {
	flags := append(append([]string{}, setFlags...),
		"installPackagePath="+filepath.Join(istioDir, "manifests")+"/", "profile=empty", "components.pilot.enabled=true")
	var files []string
	if iop != "" {
		files = []string{filepath.Join(istioDir, "pkg/kube/inject/testdata/inject", iop)}
	}
	sets, _, err := render.GenerateManifest(files, flags, false, nil, nil)
	if err != nil {
		return rendered{}, fmt.Errorf("render %v %s: %v", setFlags, iop, err)
	}
	var r rendered
	for _, set := range sets {
		for _, o := range set.Manifests {
			if o.GetKind() != "ConfigMap" {
				continue
			}
			data, _ := o.Object["data"].(map[string]any)
			switch o.GetName() {
			case "istio-sidecar-injector":
				r.config, _ = data["config"].(string)
				r.values, _ = data["values"].(string)
			case "istio":
				r.mesh, _ = data["mesh"].(string)
			}
		}
	}
	if r.config == "" || r.values == "" || r.mesh == "" {
		return r, fmt.Errorf("render %v %s: ConfigMaps istio-sidecar-injector/istio not found", setFlags, iop)
	}
	// What the test does with them must work here too.
	if _, err := inject.UnmarshalConfig([]byte(r.config)); err != nil {
		return r, fmt.Errorf("config: %v", err)
	}
	if _, err := inject.NewValuesConfig(r.values); err != nil {
		return r, fmt.Errorf("values: %v", err)
	}
	return r, nil
}

// tweakMesh returns the mesh text with the tweak applied, checked against upstream's parser.
func tweakMesh(text string, t *meshTweak) (string, error) {
	base, err := mesh.ApplyMeshConfig(text, mesh.DefaultMeshConfig())
	if err != nil {
		return "", err
	}
	want := proto.Clone(base).(*meshapi.MeshConfig)
	t.mutate(want)
	raw := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &raw); err != nil {
		return "", err
	}
	t.overlay(raw)
	out, err := yaml.Marshal(raw)
	if err != nil {
		return "", err
	}
	got, err := mesh.ApplyMeshConfig(string(out), mesh.DefaultMeshConfig())
	if err != nil {
		return "", fmt.Errorf("tweak %s: edited mesh does not parse: %v", t.name, err)
	}
	if !proto.Equal(got, want) {
		return "", fmt.Errorf("tweak %s: edited mesh text parses to a different MeshConfig than the test's mutation", t.name)
	}
	return string(out), nil
}

// caseName: the golden's name without ".yaml"/".injected" (input's for error cases).
func caseName(c upstreamCase) string {
	n := c.Want
	if c.ExpectedError != "" || n == "" {
		n = c.In
	}
	n = strings.TrimSuffix(n, ".injected")
	return strings.Replace(n, ".yaml", "", 1)
}

func runSettings(istioDir, out, self string) error {
	cases, err := readUpstreamCases(istioDir)
	if err != nil {
		return err
	}
	testdata := filepath.Join(istioDir, "pkg/kube/inject/testdata/inject")
	for _, d := range []string{"settings", "pods"} {
		if err := os.RemoveAll(filepath.Join(out, d)); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return err
		}
	}
	renders := map[string]rendered{}
	ids := map[string]string{} // content hash → id
	file := casesFile{IstioDir: istioDir, IstioVersion: filepath.Base(istioDir), Oracle: self}
	usedNames := map[string]int{}
	for _, c := range cases {
		g, err := setupGlobals(c.SetupSource)
		if err != nil {
			return fmt.Errorf("case %d (%s): %v", c.Index, c.In, err)
		}
		g.Nodes = strings.Join(c.Nodes, ",")
		key := strings.Join(c.SetFlags, "\x00") + "\x01" + c.InFilePath
		r, ok := renders[key]
		if !ok {
			if r, err = renderSettings(istioDir, c.SetFlags, c.InFilePath); err != nil {
				return fmt.Errorf("case %d (%s): %v", c.Index, c.In, err)
			}
			renders[key] = r
		}
		e := caseEntry{
			Index: c.Index, Input: filepath.Join(testdata, c.In), SetFlags: c.SetFlags, IOP: c.InFilePath,
			NativeSidecars: g.Native, CompliancePolicy: g.Compliance, OpenShift: g.OpenShift,
			NodeKubeletVersions: c.Nodes, Test: c.Test,
			Revision: "default", ExpectError: c.ExpectedError, ExpectedLog: c.ExpectedLog,
			WebhookPath: c.ExpectedError == "" && !c.SkipWebhook, KubeInjectPath: !c.SkipInjection,
		}
		if c.MeshSource != "" {
			t, err := findMeshTweak(c.MeshSource)
			if err != nil {
				return fmt.Errorf("case %d (%s): %v", c.Index, c.In, err)
			}
			if r.mesh, err = tweakMesh(r.mesh, t); err != nil {
				return fmt.Errorf("case %d (%s): %v", c.Index, c.In, err)
			}
			e.MeshTweak = t.name
		}
		sum := sha256.Sum256([]byte(r.config + "\x00" + r.values + "\x00" + r.mesh))
		h := hex.EncodeToString(sum[:])
		id, ok := ids[h]
		if !ok {
			id = "s" + h[:10]
			if c.SetFlags == nil && c.InFilePath == "" && c.MeshSource == "" {
				id = "default"
			}
			ids[h] = id
			dir := filepath.Join(out, "settings", id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for name, text := range map[string]string{"config": r.config, "values": r.values, "mesh": r.mesh} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					return err
				}
			}
		}
		e.Settings = id
		base := caseName(c)
		if c.Test != "TestInjection" {
			base += "@" + strings.TrimPrefix(c.Test, "TestInjection")
		}
		e.Name = base
		if n := usedNames[base]; n > 0 {
			e.Name = fmt.Sprintf("%s#%d", base, c.Index)
		}
		usedNames[base]++
		e.UpstreamName = fmt.Sprintf("%s/[%02d]_%s", c.Test, c.TestIndex, c.Want)
		if c.ExpectedError != "" {
			e.UpstreamName = fmt.Sprintf("%s/[%02d]_%s", c.Test, c.TestIndex, c.In)
		} else {
			e.Golden = filepath.Join(testdata, c.Want)
		}
		if c.AutoAdded {
			e.Notes = append(e.Notes, "auto-discovered input, default settings")
		}
		if c.Test != "TestInjection" {
			e.Notes = append(e.Notes, c.Test+": fake nodes "+g.Nodes)
		}
		if c.SkipWebhook {
			e.Notes = append(e.Notes, "upstream skips the webhook path (kube-inject only)")
		}
		if c.SkipInjection {
			e.Notes = append(e.Notes, "upstream skips the kube-inject path (webhook only)")
		}
		if c.ExpectedError != "" {
			e.Notes = append(e.Notes, "upstream checks the error on the kube-inject path only; the webhook path must deny the pod with the substring too")
		}
		if c.ExpectedLog != "" {
			e.Notes = append(e.Notes, "kube-inject must warn: "+c.ExpectedLog)
		}
		if g.OpenShift {
			e.Notes = append(e.Notes, "OpenShift: namespace test-ns has uid-range and supplemental-groups 1000620000/10000")
		}
		if err := writeParts(&e, out, testdata, c); err != nil {
			return fmt.Errorf("case %d (%s): %v", c.Index, c.In, err)
		}
		file.Cases = append(file.Cases, e)
	}
	file.SettingsCount = len(ids)
	selfCheck(&file, out)
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "cases.json"), append(b, '\n'), 0o644)
}

// writeParts writes DIR/pods/<name>.jsonl for the webhook path and for expected errors.
func writeParts(e *caseEntry, out, testdata string, c upstreamCase) error {
	if !e.WebhookPath && e.ExpectError == "" {
		return nil
	}
	ins, err := injectableDocs(filepath.Join(testdata, c.In))
	if err != nil {
		return err
	}
	var wants [][]byte
	if e.ExpectError == "" {
		if wants, err = injectableDocs(filepath.Join(testdata, c.Want)); err != nil {
			return err
		}
		if len(wants) != len(ins) {
			return fmt.Errorf("%d input parts but %d golden parts", len(ins), len(wants))
		}
	}
	var buf bytes.Buffer
	for i, doc := range ins {
		pod, ns, err := docToPod(doc)
		if err != nil {
			return fmt.Errorf("input part %d: %v", i, err)
		}
		podJSON, err := json.Marshal(pod)
		if err != nil {
			return err
		}
		line := map[string]any{"namespace": ns, "pod": json.RawMessage(podJSON)}
		if wants != nil {
			wpod, _, err := docToPod(wants[i])
			if err != nil {
				return fmt.Errorf("golden part %d: %v", i, err)
			}
			wjson, err := json.Marshal(wpod)
			if err != nil {
				return err
			}
			norm, err := normalizePod(wjson, false)
			if err != nil {
				return fmt.Errorf("golden part %d: %v", i, err)
			}
			line["want"] = json.RawMessage(norm)
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	e.Parts = len(ins)
	e.Pods = filepath.Join("pods", strings.ReplaceAll(e.Name, "#", "_")+".jsonl")
	return os.WriteFile(filepath.Join(out, e.Pods), buf.Bytes(), 0o644)
}

// selfCheck runs upstream's injector over every case's parts with the written settings. The
// globals are process-wide, so cases are grouped by (settings, globals) and each group gets
// its own webhook.
func selfCheck(file *casesFile, out string) {
	type group struct {
		settings string
		g        globals
	}
	byGroup := map[group][]int{}
	var order []group
	for i, e := range file.Cases {
		if e.Pods == "" {
			file.Cases[i].OracleCheck = "n/a"
			continue
		}
		k := group{e.Settings, globals{e.NativeSidecars, e.CompliancePolicy, e.OpenShift,
			strings.Join(e.NodeKubeletVersions, ",")}}
		if _, ok := byGroup[k]; !ok {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], i)
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].settings < order[b].settings })
	for _, k := range order {
		u, err := newUpstreamInjector(filepath.Join(out, "settings", k.settings), k.g, "default")
		for _, i := range byGroup[k] {
			e := &file.Cases[i]
			if err != nil {
				e.OracleCheck = "error: " + err.Error()
				continue
			}
			e.OracleCheck = checkCase(u, e, out)
		}
		if u != nil {
			close(u.stop)
		}
	}
}

func checkCase(u *upstreamInjector, e *caseEntry, out string) string {
	data, err := os.ReadFile(filepath.Join(out, e.Pods))
	if err != nil {
		return "error: " + err.Error()
	}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var part struct {
			Namespace string          `json:"namespace"`
			Pod       json.RawMessage `json:"pod"`
			Want      json.RawMessage `json:"want"`
		}
		if err := json.Unmarshal(line, &part); err != nil {
			return "error: " + err.Error()
		}
		res := u.inject(part.Namespace, part.Pod, "")
		if e.ExpectError != "" {
			if res.Error == "" || !strings.Contains(strings.ToLower(res.Error), e.ExpectError) {
				return fmt.Sprintf("mismatch: part %d: want an error containing %q, got %q", i, e.ExpectError, res.Error)
			}
			continue
		}
		if res.Error != "" {
			return fmt.Sprintf("mismatch: part %d: %s", i, res.Error)
		}
		got := res.Pod
		if res.Skipped {
			got = part.Pod
		}
		norm, err := normalizePod(got, true)
		if err != nil {
			return fmt.Sprintf("mismatch: part %d: %v", i, err)
		}
		if !bytes.Equal(norm, part.Want) {
			return fmt.Sprintf("mismatch: part %d: %s", i, firstDiff(norm, part.Want))
		}
	}
	return "ok"
}

// firstDiff names the first JSON pointer where two JSON texts differ.
func firstDiff(a, b []byte) string {
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	p, gx, gy := diffAt("", x, y)
	return fmt.Sprintf("at %s: got %s, want %s", p, short(gx), short(gy))
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func diffAt(path string, x, y any) (string, any, any) {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return path, x, y
		}
		keys := map[string]bool{}
		for k := range xv {
			keys[k] = true
		}
		for k := range yv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			if a, b, c := diffAt(p, xv[k], yv[k]); a != "" {
				return a, b, c
			}
		}
		return "", nil, nil
	case []any:
		yv, ok := y.([]any)
		if !ok {
			return path, x, y
		}
		for i := 0; i < len(xv) || i < len(yv); i++ {
			var a, b any
			if i < len(xv) {
				a = xv[i]
			}
			if i < len(yv) {
				b = yv[i]
			}
			if p, c, d := diffAt(fmt.Sprintf("%s/%d", path, i), a, b); p != "" {
				return p, c, d
			}
		}
		return "", nil, nil
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	if !bytes.Equal(xb, yb) {
		if path == "" {
			path = "/"
		}
		return path, x, y
	}
	return "", nil, nil
}
