// Command argocd-lua runs resource health checks in the Lua virtual machine Argo CD v3.5.1
// builds for them, for the tests of manifesto's checks (tests/argocd).
//
// Argo CD's own package (github.com/argoproj/argo-cd/v3/util/lua) cannot be built as a
// module: it imports github.com/argoproj/argo-cd/gitops-engine, which argo-cd's go.mod
// replaces with its ./gitops-engine folder and which the module proxy does not serve
// (v0.7.1-0.20250908182407-97ad5b59a627: 403, "This module version is not available"); the
// standalone github.com/argoproj/gitops-engine at that pseudo-version does not build in its
// place ("use of internal package ... not allowed"). So this program re-creates, on the same
// gopher-lua release (v1.1.2, argo-cd's go.mod), what Argo CD does for one health check:
//
//   - util/settings/settings.go appendResourceOverridesFromSplitKeys and convertToOverrideKey:
//     how argocd-cm's resource.customizations.<type>.<group_kind> keys become overrides;
//   - util/lua/lua.go GetHealthScript, runLuaWithResourceActionParameters, decodeValue and
//     ExecuteHealthLua: the state, the libraries it opens, the globals obj and actionParams,
//     the one-second deadline, how the returned table is read;
//   - util/lua/oslib_safe.go: the "safe" os module (time and date);
//   - gitops-engine pkg/health GetResourceHealth: a check's error shows as Unknown.
//
// Its faithfulness is tested by running Argo CD's own bundled checks (the resource_customizations
// package of argo-cd v3.5.1, embedded in the Argo CD binary) against their health_test.yaml:
// `argocd-lua bundled`.
//
// Usage:
//
//	argocd-lua eval      one JSON request a line on stdin, one JSON answer a line on stdout
//	argocd-lua bundled   run every bundled check's health_test.yaml; exit 1 on any mismatch
//	argocd-lua test [--argocd-cm FILE] FOLDER...
//	                     run each FOLDER/health_test.yaml (its testdata) through FOLDER/health.lua
//	                     with the standard libraries, as Argo CD runs a built-in check, or,
//	                     with --argocd-cm, through the check that FILE's argocd-cm ConfigMap
//	                     (one document of a YAML stream, out/gitops/<name>.yaml) gives the
//	                     object's kind, as Argo CD runs a check from argocd-cm; exit 1 on any
//	                     mismatch. The local zone is $TZ's.
//
// A request is {"object": {...}} (or "objectYAML": "...", read as Argo CD's health_test.go
// reads a test object) with either "configmap": {argocd-cm as JSON} (the check and its
// useOpenLibs read from it as Argo CD reads them) or "script": "..." and "openLibs": bool.
// The answer is the health Argo CD records: {"status": ..., "message": ...}, with "error": true
// when the check failed (Argo CD shows Unknown and the error), or {"none": true} when the
// ConfigMap has no check for the object's kind and Argo CD has no built-in Lua check for it
// (its Go checks, for core kinds, are not reproduced). With a ConfigMap, an object being
// deleted is "Pending deletion", as gitops-engine decides before any check.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	argocdcustomizations "github.com/argoproj/argo-cd/v3/resource_customizations"
	"github.com/bmatcuk/doublestar/v4"
	"sigs.k8s.io/yaml"
)

type request struct {
	Object     map[string]any `json:"object"`
	ObjectYAML *string        `json:"objectYAML"`
	ConfigMap  *configMap     `json:"configmap"`
	Script     *string        `json:"script"`
	OpenLibs   bool           `json:"openLibs"`
}

type configMap struct {
	Data map[string]string `json:"data"`
}

type answer struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   bool   `json:"error,omitempty"`
	None    bool   `json:"none,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "eval":
		if len(os.Args) != 2 {
			break
		}
		os.Exit(eval())
	case "bundled":
		if len(os.Args) != 2 {
			break
		}
		os.Exit(bundled())
	case "test":
		os.Exit(testFolders(os.Args[2:]))
	}
	fmt.Fprintln(os.Stderr, usage)
	os.Exit(2)
}

const usage = `usage: argocd-lua eval | bundled | test [--argocd-cm FILE] FOLDER...`

func eval() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		if strings.TrimSpace(in.Text()) == "" {
			continue
		}
		var req request
		// encoding/json without UseNumber: numbers are float64, as the controller's
		// unstructured objects hold them (int64 or float64, both a Lua number).
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "argocd-lua: bad request: %v\n", err)
			return 2
		}
		if req.ObjectYAML != nil {
			req.Object = map[string]any{}
			if err := yaml.Unmarshal([]byte(*req.ObjectYAML), &req.Object); err != nil {
				fmt.Fprintf(os.Stderr, "argocd-lua: bad objectYAML: %v\n", err)
				return 2
			}
		}
		ans, err := evaluate(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "argocd-lua: %v\n", err)
			return 2
		}
		line, _ := json.Marshal(ans)
		out.Write(append(line, '\n'))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "argocd-lua: %v\n", err)
		return 2
	}
	return 0
}

// evaluate returns what Argo CD records as the object's health, or an error for a request
// this program cannot answer faithfully.
func evaluate(req request) (answer, error) {
	var script string
	var openLibs bool
	switch {
	case req.ConfigMap != nil && req.Script == nil:
		// gitops-engine pkg/health GetResourceHealth: an object being deleted (and no hook)
		// is Progressing before any check runs.
		if pendingDeletion(req.Object) {
			return answer{Status: "Progressing", Message: "Pending deletion"}, nil
		}
		overrides, err := healthOverrides(req.ConfigMap.Data)
		if err != nil {
			// Argo CD cannot load its settings at all: nothing gets a custom health.
			return answer{Status: "Unknown", Message: err.Error(), Error: true}, nil
		}
		key := configMapKey(groupKind(req.Object))
		o, ok := overrides[key]
		if ok && o.HealthLua != "" {
			script, openLibs = o.HealthLua, o.UseOpenLibs
			break
		}
		for k, v := range overrides {
			if strings.ContainsAny(k, "*?[") && v.HealthLua != "" {
				return answer{}, fmt.Errorf("argocd-cm has a wildcard check %q; wildcards are not reproduced", k)
			}
		}
		// No key for the kind: Argo CD's built-in check, with the standard libraries.
		builtIn, err := builtInScript(argocdcustomizations.Embedded, builtInGlobs(), req.Object)
		if err != nil {
			return answer{}, err
		}
		if builtIn == "" {
			return answer{None: true}, nil
		}
		script, openLibs = builtIn, true
	case req.Script != nil && req.ConfigMap == nil:
		script, openLibs = *req.Script, req.OpenLibs
	default:
		return answer{}, fmt.Errorf("a request needs a script or a configmap")
	}
	hs, err := executeHealthLua(req.Object, script, openLibs)
	if err != nil {
		return answer{Status: "Unknown", Message: err.Error(), Error: true}, nil
	}
	return answer{Status: hs.Status, Message: hs.Message}, nil
}

// pendingDeletion: metadata.deletionTimestamp holds an RFC 3339 time (as unstructured's
// GetDeletionTimestamp reads it) and metadata.finalizers, a list of strings, lacks Argo CD's
// hook finalizer.
func pendingDeletion(obj map[string]any) bool {
	meta, _ := obj["metadata"].(map[string]any)
	stamp, _ := meta["deletionTimestamp"].(string)
	if t, err := time.Parse(time.RFC3339, stamp); err != nil || t.IsZero() {
		return false
	}
	items, _ := meta["finalizers"].([]any)
	for _, item := range items {
		name, ok := item.(string)
		if !ok {
			return true // not a list of strings: GetFinalizers gives none
		}
		if name == "argocd.argoproj.io/hook-finalizer" {
			return false
		}
	}
	return true
}

// builtInGlobs lists the built-in checks' folders with a wildcard ("_"), sorted.
func builtInGlobs() []string {
	var globs []string
	fs.WalkDir(argocdcustomizations.Embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Base(p) == "health.lua" && strings.Contains(path.Dir(p), "_") {
			globs = append(globs, path.Dir(p))
		}
		return nil
	})
	sort.Strings(globs)
	return globs
}

// groupKind reads apiVersion and kind as unstructured.Unstructured's GroupVersionKind does:
// "group/version" or "version" (the core group); anything else names no group and no kind.
func groupKind(obj map[string]any) (string, string) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	switch strings.Count(apiVersion, "/") {
	case 0:
		return "", kind
	case 1:
		return apiVersion[:strings.Index(apiVersion, "/")], kind
	}
	return "", ""
}

// configMapKey is util/lua GetConfigMapKey: "group/Kind", or "Kind" in the core group.
func configMapKey(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

type override struct {
	HealthLua   string
	UseOpenLibs bool
}

// healthOverrides reads argocd-cm's data as util/settings appendResourceOverridesFromSplitKeys
// does, keeping the two customization types a health check uses. The other types Argo CD
// accepts are parsed by Argo CD (and can fail there); this program refuses them rather than
// guess, and refuses the older single "resource.customizations" key.
func healthOverrides(data map[string]string) (map[string]override, error) {
	const prefix = "resource.customizations"
	out := map[string]override{}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := data[k]
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		parts := strings.SplitN(k, ".", 4)
		if len(parts) < 4 {
			if k == prefix && v != "" {
				return nil, fmt.Errorf("the single %s key is not reproduced here", prefix)
			}
			continue
		}
		key, err := overrideKey(parts[3])
		if err != nil {
			return nil, err
		}
		if key == "all" {
			key = "*/*"
		}
		o := out[key]
		switch parts[2] {
		case "health":
			o.HealthLua = v
		case "useOpenLibs":
			b, err := parseBool(v)
			if err != nil {
				return nil, err
			}
			o.UseOpenLibs = b
		case "actions", "ignoreDifferences", "ignoreResourceUpdates", "knownTypeFields":
			return nil, fmt.Errorf("customization type %s is not reproduced here", parts[2])
		default:
			return nil, fmt.Errorf("resource customization type %s not supported", parts[2])
		}
		out[key] = o
	}
	return out, nil
}

// overrideKey is util/settings convertToOverrideKey: "group_Kind" or "Kind".
func overrideKey(groupKind string) (string, error) {
	parts := strings.Split(groupKind, "_")
	if len(parts) == 2 {
		return parts[0] + "/" + parts[1], nil
	}
	if len(parts) == 1 && groupKind != "" {
		return groupKind, nil
	}
	return "", fmt.Errorf("group kind should be in format `resource.customizations.<type>.<group_kind>` or resource.customizations.<type>.<kind>`, got group kind: '%s'", groupKind)
}

// parseBool accepts what strconv.ParseBool accepts.
func parseBool(s string) (bool, error) {
	switch s {
	case "1", "t", "T", "TRUE", "true", "True":
		return true, nil
	case "0", "f", "F", "FALSE", "false", "False":
		return false, nil
	}
	return false, fmt.Errorf("strconv.ParseBool: parsing %q: invalid syntax", s)
}

type healthTest struct {
	Tests []struct {
		InputPath    string       `json:"inputPath"`
		HealthStatus healthStatus `json:"healthStatus"`
	} `json:"tests"`
}

// builtInScript is VM.GetHealthScript for an object no argocd-cm key covers: the built-in
// "<group>/<Kind>/health.lua", else the first (sorted) wildcard folder ("_" for "*") whose
// pattern matches "<group>/<Kind>", as getWildcardBuiltInHealthOverrideLua. Built-in checks
// always run with the standard libraries.
func builtInScript(root fs.FS, globs []string, obj map[string]any) (string, error) {
	key := configMapKey(groupKind(obj))
	if data, err := fs.ReadFile(root, path.Join(key, "health.lua")); err == nil {
		return string(data), nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	for _, g := range globs {
		if doublestar.PathMatchUnvalidated(strings.ReplaceAll(g, "_", "*"), key) {
			data, err := fs.ReadFile(root, path.Join(g, "health.lua"))
			return string(data), err
		}
	}
	return "", nil
}

// bundled runs util/lua health_test.go TestLuaHealthScript over the checks compiled into
// Argo CD (resource_customizations.Embedded): for each case of every health_test.yaml, the
// script GetHealthScript picks for the test object, run with UseOpenLibs.
func bundled() int {
	root := argocdcustomizations.Embedded
	var scripts []string
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && path.Base(p) == "health.lua" {
			scripts = append(scripts, p)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	globs := builtInGlobs()
	checks, cases, failed := 0, 0, 0
	for _, p := range scripts {
		dir := path.Dir(p)
		raw, err := fs.ReadFile(root, path.Join(dir, "health_test.yaml"))
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", dir, err)
			failed++
			continue
		}
		var tests healthTest
		if err := yaml.Unmarshal(raw, &tests); err != nil {
			fmt.Printf("FAIL %s: health_test.yaml: %v\n", dir, err)
			failed++
			continue
		}
		checks++
		for _, t := range tests.Tests {
			cases++
			name := path.Join(dir, t.InputPath)
			text, err := fs.ReadFile(root, path.Join(dir, t.InputPath))
			if err != nil {
				fmt.Printf("FAIL %s: %v\n", name, err)
				failed++
				continue
			}
			// health_test.go getObj: sigs.k8s.io/yaml into map[string]any.
			obj := map[string]any{}
			if err := yaml.Unmarshal(text, &obj); err != nil {
				fmt.Printf("FAIL %s: %v\n", name, err)
				failed++
				continue
			}
			script, err := builtInScript(root, globs, obj)
			if err != nil || script == "" {
				fmt.Printf("FAIL %s: no built-in check (%v)\n", name, err)
				failed++
				continue
			}
			got, err := executeHealthLua(obj, script, true)
			if err != nil {
				fmt.Printf("FAIL %s: %v\n", name, err)
				failed++
				continue
			}
			if *got != t.HealthStatus {
				fmt.Printf("FAIL %s: got %+v, want %+v\n", name, *got, t.HealthStatus)
				failed++
			}
		}
	}
	fmt.Printf("%d checks, %d cases, %d failed\n", checks, cases, failed)
	if failed > 0 || checks == 0 {
		return 1
	}
	return 0
}

// testFolders runs health_test.yaml folders (see the package comment).
func testFolders(args []string) int {
	var cm *configMap
	var folders []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--argocd-cm" && i+1 < len(args) {
			found, err := readArgocdCM(args[i+1])
			if err != nil {
				fmt.Fprintf(os.Stderr, "argocd-lua: %v\n", err)
				return 2
			}
			cm = found
			i++
			continue
		}
		if strings.HasPrefix(args[i], "-") {
			fmt.Fprintln(os.Stderr, usage)
			return 2
		}
		folders = append(folders, args[i])
	}
	if len(folders) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	cases, failed := 0, 0
	for _, dir := range folders {
		raw, err := os.ReadFile(path.Join(dir, "health_test.yaml"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "argocd-lua: %v\n", err)
			return 2
		}
		var tests healthTest
		if err := yaml.Unmarshal(raw, &tests); err != nil {
			fmt.Fprintf(os.Stderr, "argocd-lua: %s: %v\n", path.Join(dir, "health_test.yaml"), err)
			return 2
		}
		var script *string
		if cm == nil {
			text, err := os.ReadFile(path.Join(dir, "health.lua"))
			if err != nil {
				fmt.Fprintf(os.Stderr, "argocd-lua: %v\n", err)
				return 2
			}
			s := string(text)
			script = &s
		}
		for _, t := range tests.Tests {
			cases++
			name := path.Join(dir, t.InputPath)
			text, err := os.ReadFile(name)
			if err != nil {
				fmt.Fprintf(os.Stderr, "argocd-lua: %v\n", err)
				return 2
			}
			obj := map[string]any{}
			if err := yaml.Unmarshal(text, &obj); err != nil {
				fmt.Fprintf(os.Stderr, "argocd-lua: %s: %v\n", name, err)
				return 2
			}
			got, err := evaluate(request{Object: obj, ConfigMap: cm, Script: script, OpenLibs: true})
			if err != nil {
				fmt.Fprintf(os.Stderr, "argocd-lua: %s: %v\n", name, err)
				return 2
			}
			want := answer{Status: t.HealthStatus.Status, Message: t.HealthStatus.Message}
			if got != want {
				failed++
				fmt.Printf("FAIL %s: got %+v, want %+v\n", name, got, want)
			} else {
				fmt.Printf("ok   %s: %s\n", name, got.Status)
			}
		}
	}
	fmt.Printf("%d cases, %d failed\n", cases, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// readArgocdCM finds the argocd-cm ConfigMap among the documents of a YAML stream.
func readArgocdCM(file string) (*configMap, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	for _, doc := range documentSeparator.Split(string(raw), -1) {
		var obj struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		if obj.Kind == "ConfigMap" && obj.Metadata.Name == "argocd-cm" {
			return &configMap{Data: obj.Data}, nil
		}
	}
	return nil, fmt.Errorf("%s has no argocd-cm ConfigMap", file)
}

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
