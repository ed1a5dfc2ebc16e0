// yamloracle answers questions about sigs.k8s.io/yaml and Kubernetes strategic merge patch
// for meshop's differential tests. It reads cases from stdin, one JSON object per line, and
// writes one JSON object per line with the Go result:
//
//	{"op":"yaml2json","input":"..."}             -> {"ok":true,"output":"<json>"} | {"ok":false,"error":"..."}
//	{"op":"yaml2json_strict","input":"..."}
//	{"op":"json2yaml","input":"<json>"}          -> {"ok":true,"output":"<yaml>"}
//	{"op":"smp_pod","original":"<json>","patch":"<yaml>"} -> merged pod JSON (strategicpatch with corev1.Pod metadata)
//	{"op":"bench_yaml2json","input":"...","n":1000}  -> nanoseconds per YAMLToJSON call (for benchmark notes)
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

type request struct {
	Op       string `json:"op"`
	Input    string `json:"input"`
	Original string `json:"original"`
	Patch    string `json:"patch"`
	N        int    `json:"n"`
}

type response struct {
	OK     bool   `json:"ok"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

func run(r request) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch r.Op {
	case "yaml2json":
		b, err := yaml.YAMLToJSON([]byte(r.Input))
		return string(b), err
	case "bench_yaml2json":
		start := time.Now()
		for i := 0; i < r.N; i++ {
			if _, err := yaml.YAMLToJSON([]byte(r.Input)); err != nil {
				return "", err
			}
		}
		return fmt.Sprint(time.Since(start).Nanoseconds() / int64(max(r.N, 1))), nil
	case "yaml2json_strict":
		b, err := yaml.YAMLToJSONStrict([]byte(r.Input))
		return string(b), err
	case "json2yaml":
		b, err := yaml.JSONToYAML([]byte(r.Input))
		return string(b), err
	case "smp_pod":
		// As Istio's StrategicMergePatchYAML: the patch is YAML, decoded with sigs.k8s.io/yaml.
		patchJSON, err := yaml.YAMLToJSON([]byte(r.Patch))
		if err != nil {
			return "", err
		}
		var patchMap map[string]interface{}
		if err := json.Unmarshal(patchJSON, &patchMap); err != nil {
			return "", err
		}
		var origMap map[string]interface{}
		if err := json.Unmarshal([]byte(r.Original), &origMap); err != nil {
			return "", err
		}
		meta, err := strategicpatch.NewPatchMetaFromStruct(&corev1.Pod{})
		if err != nil {
			return "", err
		}
		merged, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(origMap, patchMap, meta)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(merged)
		return string(b), err
	}
	return "", fmt.Errorf("unknown op %q", r.Op)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var r request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			resp.Error = "bad request: " + err.Error()
		} else if o, err := run(r); err != nil {
			resp.Error = err.Error()
		} else {
			resp.OK = true
			resp.Output = o
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
