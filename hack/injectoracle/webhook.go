package main

// Upstream's injector, built through its public API: inject.NewWebhook over a file Watcher of
// the settings directory, with a fake cluster that holds what TestInjection's fake cluster
// holds (nodes with kubelets v1.33.0 and v1.34.0, so ENABLE_NATIVE_SIDECARS=auto means on, and
// Namespace test-ns with OpenShift UID/GID ranges). Requests go through the real HTTP handler
// (serveInject) with an admission.k8s.io/v1 AdmissionReview.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	jsonpatch "github.com/evanphx/json-patch/v5"
	securityv1 "github.com/openshift/api/security/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	common_features "istio.io/istio/pkg/features"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/multicluster"
)

// applyGlobals sets the process-global switches upstream's injector reads. They are global in
// upstream too, so one process serves one combination.
func applyGlobals(g globals) error {
	switch g.Native {
	case "", "auto":
		features.EnableNativeSidecars = features.NativeSidecarModeAuto
	case "true":
		features.EnableNativeSidecars = features.NativeSidecarModeEnabled
	case "false":
		features.EnableNativeSidecars = features.NativeSidecarModeDisabled
	default:
		return fmt.Errorf("--native %q: want auto, true or false", g.Native)
	}
	common_features.CompliancePolicy = g.Compliance
	if g.OpenShift {
		return os.Setenv("PLATFORM", "openshift")
	}
	return os.Unsetenv("PLATFORM")
}

type upstreamInjector struct {
	mux  *http.ServeMux
	stop chan struct{}
	uid  atomic.Int64
}

func newUpstreamInjector(settingsDir string, g globals, revision string) (*upstreamInjector, error) {
	if err := applyGlobals(g); err != nil {
		return nil, err
	}
	meshText, err := os.ReadFile(filepath.Join(settingsDir, "mesh"))
	if err != nil {
		return nil, err
	}
	mc, err := mesh.ApplyMeshConfig(string(meshText), mesh.DefaultMeshConfig())
	if err != nil {
		return nil, fmt.Errorf("%s/mesh: %v", settingsDir, err)
	}
	env := &model.Environment{Watcher: meshwatcher.NewTestWatcher(mc)}
	env.SetPushContext(&model.PushContext{ProxyConfigs: &model.ProxyConfigs{}})
	watcher, err := inject.NewFileWatcher(filepath.Join(settingsDir, "config"), filepath.Join(settingsDir, "values"))
	if err != nil {
		return nil, err
	}
	multi := multicluster.NewFakeController()
	u := &upstreamInjector{mux: http.NewServeMux(), stop: make(chan struct{})}
	if _, err := inject.NewWebhook(inject.WebhookParameters{
		Watcher: watcher, Env: env, Mux: u.mux, Revision: revision, MultiCluster: multi,
	}); err != nil {
		return nil, err
	}
	// The cluster joins after the webhook registered its node/namespace components, as in
	// TestInjection.
	client := kube.NewFakeClient(fakeClusterObjects(g.Nodes)...)
	multi.Add(constants.DefaultClusterName, client, u.stop)
	client.RunAndWait(u.stop)
	return u, nil
}

// fakeClusterObjects: nodes node-1, node-2, ... with the given kubelet versions (comma-separated,
// default TestInjection's "v1.33.0,v1.34.0") and the OpenShift namespace test-ns.
func fakeClusterObjects(versions string) []runtime.Object {
	node := func(name, version string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status:     corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version}},
		}
	}
	if versions == "" {
		versions = defaultNodes
	}
	var objs []runtime.Object
	for i, v := range strings.Split(versions, ",") {
		objs = append(objs, node(fmt.Sprintf("node-%d", i+1), v))
	}
	return append(objs,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: "test-ns",
			Annotations: map[string]string{
				securityv1.UIDRangeAnnotation:           "1000620000/10000",
				securityv1.SupplementalGroupsAnnotation: "1000620000/10000",
			},
		}})
}

const defaultNodes = "v1.33.0,v1.34.0"

// injectResult is one output line of `injectoracle inject`.
type injectResult struct {
	Pod     json.RawMessage `json:"pod,omitempty"`
	Patch   json.RawMessage `json:"patch,omitempty"`
	Error   string          `json:"error,omitempty"`
	Skipped bool            `json:"skipped,omitempty"`
}

// inject sends one pod through serveInject and applies the returned JSON patch.
func (u *upstreamInjector) inject(namespace string, pod []byte, path string) injectResult {
	uid := "oracle-" + strconv.FormatInt(u.uid.Add(1), 10)
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":       uid,
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"resource":  map[string]any{"group": "", "version": "v1", "resource": "pods"},
			"namespace": namespace,
			"operation": "CREATE",
			"userInfo":  map[string]any{},
			"object":    json.RawMessage(pod),
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return injectResult{Error: "oracle: " + err.Error()}
	}
	if path == "" {
		path = "/inject"
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	u.mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return injectResult{Error: fmt.Sprintf("oracle: HTTP %d: %s", rec.Code, rec.Body.String())}
	}
	var out struct {
		Response struct {
			UID     string `json:"uid"`
			Allowed bool   `json:"allowed"`
			Patch   []byte `json:"patch"`
			Result  *struct {
				Message string `json:"message"`
			} `json:"status"`
		} `json:"response"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		return injectResult{Error: "oracle: bad AdmissionReview response: " + err.Error()}
	}
	if !out.Response.Allowed {
		msg := "denied"
		if out.Response.Result != nil {
			msg = out.Response.Result.Message
		}
		return injectResult{Error: msg}
	}
	if len(out.Response.Patch) == 0 {
		return injectResult{Skipped: true}
	}
	p, err := jsonpatch.DecodePatch(out.Response.Patch)
	if err != nil {
		return injectResult{Error: "oracle: bad patch: " + err.Error()}
	}
	patched, err := p.Apply(pod)
	if err != nil {
		return injectResult{Error: "oracle: patch does not apply: " + err.Error()}
	}
	return injectResult{Pod: patched, Patch: out.Response.Patch}
}
