package main

// `injectoracle genpods --seed N --count K`: reproducible random pods for the differential
// test. Each pod is built as corev1 types and marshalled by Go, so it is a pod the API server
// could send. The mix aims at the injector's branches: the inject label/annotation, traffic
// and status annotations (mostly valid, sometimes not), probes of every kind on named and
// numeric ports, lifecycle hooks, init containers, security contexts, several containers, a
// user `istio-proxy` override, hostNetwork, Prometheus annotations.

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

type gen struct{ r *rand.Rand }

func (g gen) chance(p float64) bool    { return g.r.Float64() < p }
func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g gen) n(lo, hi int) int         { return lo + g.r.IntN(hi-lo+1) }

func (g gen) ports(prefix string) []corev1.ContainerPort {
	var ps []corev1.ContainerPort
	used := map[int32]bool{}
	for i := 0; i < g.n(0, 3); i++ {
		port := []int32{80, 8080, 9090, 3000, 5000, 443, 7070, 8443}[g.r.IntN(8)]
		if used[port] {
			continue
		}
		used[port] = true
		p := corev1.ContainerPort{ContainerPort: port}
		if g.chance(0.6) {
			p.Name = fmt.Sprintf("%s-%s%d", g.pick("http", "grpc", "tcp", "metrics"), prefix, i)
		}
		if g.chance(0.15) {
			p.Protocol = corev1.Protocol(g.pick("TCP", "UDP", "SCTP"))
		}
		ps = append(ps, p)
	}
	return ps
}

func (g gen) portRef(ports []corev1.ContainerPort) intstr.IntOrString {
	if len(ports) > 0 && g.chance(0.7) {
		p := ports[g.r.IntN(len(ports))]
		if p.Name != "" && g.chance(0.6) {
			return intstr.FromString(p.Name)
		}
		return intstr.FromInt32(p.ContainerPort)
	}
	if g.chance(0.2) {
		return intstr.FromString("undefined-port")
	}
	return intstr.FromInt32(int32(g.n(1000, 9999)))
}

func (g gen) handler(ports []corev1.ContainerPort) corev1.ProbeHandler {
	switch g.r.IntN(4) {
	case 0:
		h := &corev1.HTTPGetAction{Path: g.pick("/", "/healthz", "/ready", "/a/b?c=d"), Port: g.portRef(ports)}
		if g.chance(0.2) {
			h.Scheme = corev1.URISchemeHTTPS
		}
		if g.chance(0.2) {
			h.HTTPHeaders = []corev1.HTTPHeader{{Name: "X-Probe", Value: "1"}}
		}
		return corev1.ProbeHandler{HTTPGet: h}
	case 1:
		return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: g.portRef(ports)}}
	case 2:
		p := int32(g.n(1000, 9999))
		if len(ports) > 0 && g.chance(0.5) {
			p = ports[0].ContainerPort
		}
		gr := &corev1.GRPCAction{Port: p}
		if g.chance(0.3) {
			gr.Service = ptr.To("health")
		}
		return corev1.ProbeHandler{GRPC: gr}
	default:
		return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}
	}
}

func (g gen) probe(ports []corev1.ContainerPort) *corev1.Probe {
	if !g.chance(0.45) {
		return nil
	}
	p := &corev1.Probe{ProbeHandler: g.handler(ports)}
	if g.chance(0.5) {
		p.InitialDelaySeconds = int32(g.n(0, 30))
		p.PeriodSeconds = int32(g.n(1, 30))
	}
	if g.chance(0.3) {
		p.TimeoutSeconds = int32(g.n(1, 10))
	}
	return p
}

func (g gen) lifecycle(ports []corev1.ContainerPort) *corev1.Lifecycle {
	if !g.chance(0.2) {
		return nil
	}
	lh := func() *corev1.LifecycleHandler {
		switch g.r.IntN(3) {
		case 0:
			return &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/hook", Port: g.portRef(ports)}}
		case 1:
			return &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: g.portRef(ports)}}
		}
		return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "1"}}}
	}
	l := &corev1.Lifecycle{}
	if g.chance(0.6) {
		l.PreStop = lh()
	}
	if g.chance(0.5) {
		l.PostStart = lh()
	}
	return l
}

func (g gen) securityContext() *corev1.SecurityContext {
	if !g.chance(0.3) {
		return nil
	}
	sc := &corev1.SecurityContext{}
	if g.chance(0.5) {
		sc.RunAsUser = ptr.To([]int64{0, 1000, 1337, 65534}[g.r.IntN(4)])
	}
	if g.chance(0.4) {
		sc.RunAsNonRoot = ptr.To(g.chance(0.5))
	}
	if g.chance(0.3) {
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
	if g.chance(0.2) {
		sc.ReadOnlyRootFilesystem = ptr.To(true)
	}
	return sc
}

func (g gen) container(name string, init bool) corev1.Container {
	c := corev1.Container{Name: name, Image: g.pick("nginx", "busybox:1.36", "example.com/app:v2")}
	c.Ports = g.ports(name[:1])
	if !init {
		c.ReadinessProbe = g.probe(c.Ports)
		c.LivenessProbe = g.probe(c.Ports)
		c.StartupProbe = g.probe(c.Ports)
		c.Lifecycle = g.lifecycle(c.Ports)
	}
	c.SecurityContext = g.securityContext()
	if g.chance(0.3) {
		c.Args = []string{"--port", "8080"}
	}
	if g.chance(0.3) {
		c.Env = []corev1.EnvVar{{Name: "MODE", Value: g.pick("a", "b")}}
		if g.chance(0.4) {
			c.Env = append(c.Env, corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}})
		}
	}
	if g.chance(0.3) {
		c.Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(g.pick("100m", "1", "250m")),
			corev1.ResourceMemory: resource.MustParse(g.pick("64Mi", "1Gi", "128M")),
		}
	}
	if g.chance(0.2) {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	}
	return c
}

var trafficAnnotations = map[string][]string{
	"traffic.sidecar.istio.io/includeOutboundIPRanges": {"*", "10.0.0.0/8", "10.0.0.0/8,192.168.0.0/16", "", "not-a-cidr"},
	"traffic.sidecar.istio.io/excludeOutboundIPRanges": {"10.96.0.1/32", "1.1.1.1/24,2.2.2.2/16", ""},
	"traffic.sidecar.istio.io/includeInboundPorts":     {"*", "80,8080", "", "9090"},
	"traffic.sidecar.istio.io/excludeInboundPorts":     {"15020", "8080,9090", "", "99999"},
	"traffic.sidecar.istio.io/excludeOutboundPorts":    {"3306", "5432,6379", ""},
	"traffic.sidecar.istio.io/includeOutboundPorts":    {"443", "80,443"},
	"traffic.sidecar.istio.io/excludeInterfaces":       {"eth1", "eth1,eth2"},
	"sidecar.istio.io/interceptionMode":                {"REDIRECT", "TPROXY", "NONE"},
	"status.sidecar.istio.io/port":                     {"15021", "0", "16000"},
	"readiness.status.sidecar.istio.io/periodSeconds":  {"5", "30"},
	"sidecar.istio.io/proxyCPU":                        {"200m", "1"},
	"sidecar.istio.io/proxyMemory":                     {"256Mi", "1Gi"},
	"sidecar.istio.io/proxyCPULimit":                   {"2", "500m"},
	"sidecar.istio.io/logLevel":                        {"debug", "warning"},
	"sidecar.istio.io/rewriteAppHTTPProbers":           {"true", "false"},
	"proxy.istio.io/config":                            {"holdApplicationUntilProxyStarts: true", "concurrency: 3", "{}"},
	"prometheus.io/scrape":                             {"true", "false"},
	"prometheus.io/port":                               {"9090", "8080"},
	"prometheus.io/path":                               {"/metrics"},
	"sidecar.istio.io/nativeSidecar":                   {"true", "false"},
	"kubectl.kubernetes.io/default-container":          {"app"},
	"inject.istio.io/templates":                        {"sidecar", "sidecar,sidecar", "grpc-agent", "gateway"},
}

func (g gen) pod(i int) (string, corev1.Pod) {
	ns := g.pick("default", "default", "app", "app", "test-ns", "test-ns", "default", "app", "test-ns", "kube-system")
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}, Annotations: map[string]string{}},
	}
	if g.chance(0.5) {
		pod.Name = fmt.Sprintf("pod-%d", i)
	} else {
		pod.GenerateName = fmt.Sprintf("workload-%d-", i)
		controller := true
		kind := g.pick("ReplicaSet", "StatefulSet", "Job", "DaemonSet")
		name := fmt.Sprintf("workload-%d", i)
		if kind == "ReplicaSet" {
			name += "-7d9f8b6c5"
			pod.Labels["pod-template-hash"] = "7d9f8b6c5"
		}
		if kind == "Job" && g.chance(0.5) {
			name += "-28391520"
		}
		apiVersion := "apps/v1"
		if kind == "Job" {
			apiVersion = "batch/v1"
		}
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: &controller}}
	}
	if g.chance(0.3) {
		pod.Namespace = ns
	}
	if g.chance(0.6) {
		pod.Labels["app"] = g.pick("reviews", "ratings", "a-very-long-application-name-that-is-longer-than-sixty-three-characters-x")
	}
	if g.chance(0.4) {
		pod.Labels["version"] = g.pick("v1", "v2")
	}
	if g.chance(0.3) {
		pod.Labels["sidecar.istio.io/inject"] = g.pick("true", "false", "", "yes")
	}
	if g.chance(0.3) {
		pod.Annotations["sidecar.istio.io/inject"] = g.pick("true", "false", "", "True")
	}
	keys := make([]string, 0, len(trafficAnnotations))
	for k := range trafficAnnotations {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		if g.chance(0.1) {
			vs := trafficAnnotations[k]
			pod.Annotations[k] = vs[g.r.IntN(len(vs))]
		}
	}
	nc := g.n(1, 3)
	for j := 0; j < nc; j++ {
		name := []string{"app", "sidecar-helper", "worker"}[j]
		pod.Spec.Containers = append(pod.Spec.Containers, g.container(name, false))
	}
	if g.chance(0.1) {
		proxy := corev1.Container{Name: "istio-proxy", Image: "auto"}
		if g.chance(0.5) {
			proxy.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
		}
		if g.chance(0.5) {
			proxy.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To(int64(1234))}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, proxy)
	}
	for j := 0; j < g.n(0, 2); j++ {
		if g.chance(0.5) {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, g.container(fmt.Sprintf("init-%d", j), true))
		}
	}
	if g.chance(0.3) {
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	if g.chance(0.2) {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To(int64(2000))}
		if g.chance(0.5) {
			pod.Spec.SecurityContext.RunAsUser = ptr.To(int64(1000))
		}
	}
	if g.chance(0.05) {
		pod.Spec.HostNetwork = true
	}
	if g.chance(0.1) {
		pod.Spec.DNSPolicy = corev1.DNSDefault
	}
	if g.chance(0.1) {
		pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	}
	if g.chance(0.1) {
		pod.Spec.ServiceAccountName = "custom-sa"
	}
	if len(pod.Labels) == 0 {
		pod.Labels = nil
	}
	if len(pod.Annotations) == 0 {
		pod.Annotations = nil
	}
	return ns, pod
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func cmdGenpods(args []string) error {
	fs := flag.NewFlagSet("genpods", flag.ExitOnError)
	seed := fs.Uint64("seed", 1, "random seed")
	count := fs.Int("count", 200, "number of pods")
	_ = fs.Parse(args)
	g := gen{rand.New(rand.NewPCG(*seed, 0x6d6573686f70))}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for i := 0; i < *count; i++ {
		ns, pod := g.pod(i)
		if err := enc.Encode(map[string]any{"index": i, "seed": *seed, "namespace": ns, "pod": pod}); err != nil {
			return err
		}
	}
	return nil
}
