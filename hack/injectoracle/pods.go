package main

// How TestInjection's webhook path turns its inputs and goldens into Pods, and how it
// normalises them before comparing (written from inject_test.go/webhook_test.go behaviour:
// splitYamlFile, getInjectableYamlDocs, objectToPod, simulateOwnerRef,
// normalizeAndCompareDeployments).

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	openshiftv1 "github.com/openshift/api/apps/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"istio.io/api/annotation"
	"istio.io/istio/pkg/kube/inject"
)

// A webhook-path part: one injectable document (or List item) of a case's input.
type podPart struct {
	Namespace string          `json:"namespace"`
	Pod       json.RawMessage `json:"pod"`
}

// injectableDocs splits a manifest file as the test does: on "\n---" separators, keeping
// workload kinds and expanding Lists; other kinds (Service, ...) are dropped.
func injectableDocs(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, part := range strings.Split(string(data), "\n---") {
		docs, err := injectableDoc([]byte(part))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, docs...)
	}
	return out, nil
}

func injectableDoc(doc []byte) ([][]byte, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	switch m["kind"] {
	case "Deployment", "DeploymentConfig", "DaemonSet", "StatefulSet", "Job", "ReplicaSet",
		"ReplicationController", "CronJob", "Pod":
		return [][]byte{doc}, nil
	case "List":
		var list metav1.List
		if err := yaml.Unmarshal(doc, &list); err != nil {
			return nil, err
		}
		var out [][]byte
		for _, item := range list.Items {
			b, err := yaml.Marshal(item)
			if err != nil {
				return nil, err
			}
			docs, err := injectableDoc(b)
			if err != nil {
				return nil, err
			}
			out = append(out, docs...)
		}
		return out, nil
	}
	return nil, nil
}

func ownedMeta(m metav1.ObjectMeta, name string, gvk schema.GroupVersionKind) metav1.ObjectMeta {
	controller := true
	m.GenerateName = name
	m.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       name,
		Controller: &controller,
	}}
	return m
}

// docToPod is what a controller would create from the document: the pod template with the
// owner reference (and generateName) of the controlling object.
func docToPod(doc []byte) (*corev1.Pod, string, error) {
	obj, err := inject.FromRawToObject(doc)
	if err != nil {
		return nil, "", err
	}
	var ns struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = yaml.Unmarshal(doc, &ns)
	pod, err := objectToPod(obj)
	return pod, ns.Metadata.Namespace, err
}

func objectToPod(obj runtime.Object) (*corev1.Pod, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	fromTemplate := func(t corev1.PodTemplateSpec, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: ownedMeta(t.ObjectMeta, name, gvk), Spec: t.Spec}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return o, nil
	case *batchv1.CronJob:
		t := o.Spec.JobTemplate.Spec.Template
		return &corev1.Pod{ObjectMeta: ownedMeta(t.ObjectMeta, o.Name, gvk), Spec: t.Spec}, nil
	case *appsv1.DaemonSet:
		return fromTemplate(o.Spec.Template, o.Name), nil
	case *appsv1.ReplicaSet:
		return fromTemplate(o.Spec.Template, o.Name), nil
	case *corev1.ReplicationController:
		return fromTemplate(*o.Spec.Template, o.Name), nil
	case *appsv1.StatefulSet:
		return fromTemplate(o.Spec.Template, o.Name), nil
	case *batchv1.Job:
		return fromTemplate(o.Spec.Template, o.Name), nil
	case *openshiftv1.DeploymentConfig:
		return fromTemplate(*o.Spec.Template, o.Name), nil
	case *appsv1.Deployment:
		// Pods of a Deployment belong to a ReplicaSet; the test names it <name>-fake.
		rs := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
		meta := ownedMeta(o.Spec.Template.ObjectMeta, o.Name+"-fake", rs)
		meta.GenerateName += "-"
		if meta.Labels == nil {
			meta.Labels = map[string]string{}
		}
		meta.Labels["pod-template-hash"] = "fake"
		return &corev1.Pod{ObjectMeta: meta, Spec: o.Spec.Template.Spec}, nil
	}
	return nil, fmt.Errorf("unknown type %T", obj)
}

// normalizePod is the comparison form of a pod: decoded into corev1.Pod (what Go keeps, with
// canonical quantities), sidecar.istio.io/status removed, env fieldRef apiVersion blanked in
// containers (not init containers, as upstream), then json.Marshal. ISTIO_METAJSON_* values
// must be JSON objects of strings, as upstream checks.
func normalizePod(raw []byte, blankFieldRef bool) ([]byte, error) {
	var pod corev1.Pod
	if err := json.Unmarshal(raw, &pod); err != nil {
		return nil, fmt.Errorf("does not decode as a Pod: %v", err)
	}
	delete(pod.Annotations, annotation.SidecarStatus.Name)
	for _, c := range pod.Spec.Containers {
		for _, env := range c.Env {
			if blankFieldRef && env.ValueFrom != nil && env.ValueFrom.FieldRef != nil {
				env.ValueFrom.FieldRef.APIVersion = ""
			}
			if strings.HasPrefix(env.Name, "ISTIO_METAJSON_") {
				var mm map[string]string
				if err := json.Unmarshal([]byte(env.Value), &mm); err != nil {
					return nil, fmt.Errorf("container %s env %s: not a JSON map of strings: %v", c.Name, env.Name, err)
				}
			}
		}
	}
	return json.Marshal(&pod)
}

// canonicalPod is the pod as Go would send it: decoded into corev1.Pod and re-marshalled.
func canonicalPod(raw []byte) ([]byte, error) {
	var pod corev1.Pod
	if err := json.Unmarshal(raw, &pod); err != nil {
		return nil, fmt.Errorf("does not decode as a Pod: %v", err)
	}
	return json.Marshal(&pod)
}
