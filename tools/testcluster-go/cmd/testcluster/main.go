// Command testcluster runs a Kubernetes control plane for tests on 127.0.0.1 only:
// embedded etcd, kube-apiserver, kube-controller-manager and kube-scheduler of one
// release (built from this module), simulated GPU nodes, and optional extra
// controllers (such as the LeaderWorkerSet manager). It stays in the foreground until
// SIGTERM or SIGINT, then stops everything it started. DIR/ready appears once every
// component is ready; DIR/kubeconfig and DIR/env say how to reach the cluster.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

type options struct {
	dir        string
	bin        string
	crds       multiFlag
	nodes      string
	components string
	timeout    time.Duration
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "", "state folder (pki, logs, etcd data, kubeconfig, env)")
	flag.StringVar(&o.bin, "bin", "", "folder holding kube-apiserver, kube-controller-manager, kube-scheduler, kubectl")
	flag.Var(&o.crds, "crds", "folder of CustomResourceDefinition YAML files to install (repeatable)")
	flag.StringVar(&o.nodes, "nodes", "", "JSON file describing the simulated nodes (default: 4 nodes with 8 nvidia.com/gpu each)")
	flag.StringVar(&o.components, "components", "apiserver,controller-manager,scheduler,nodes",
		"comma-separated components to run")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "how long to wait for the cluster to become ready")
	flag.Parse()
	if o.dir == "" || o.bin == "" {
		fmt.Fprintln(os.Stderr, "testcluster: --dir and --bin are required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		_ = os.WriteFile(filepath.Join(o.dir, "failed"), []byte(err.Error()+"\n"), 0o644)
		os.Exit(1)
	}
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type cluster struct {
	o        options
	pki      *pki
	procs    []*proc
	exited   chan error
	server   string
	etcd     *embed.Etcd
	etcdURL  string
	logs     string
	has      map[string]bool
	stopping atomic.Bool
}

func run(o options) error {
	var err error
	if o.dir, err = filepath.Abs(o.dir); err != nil {
		return err
	}
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	for _, name := range []string{"ready", "failed"} {
		_ = os.Remove(filepath.Join(o.dir, name))
	}
	c := &cluster{o: o, logs: filepath.Join(o.dir, "logs"), has: map[string]bool{}, exited: make(chan error, 8)}
	for _, comp := range strings.Split(o.components, ",") {
		if comp = strings.TrimSpace(comp); comp != "" {
			c.has[comp] = true
		}
	}
	if err := os.MkdirAll(c.logs, 0o755); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	defer c.stop()
	start := time.Now()
	if err := c.start(ctx); err != nil {
		return err
	}
	took := time.Since(start).Round(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(o.dir, "ready"), []byte(took.String()+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "testcluster: ready in %s at %s\n", took, c.server)
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.exited:
		return err
	}
}

func (c *cluster) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.timeout)
	defer cancel()
	var err error
	if c.pki, err = newPKI(filepath.Join(c.o.dir, "pki")); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := c.startEtcd(); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.server = fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := c.writeKubeconfigs(); err != nil {
		return err
	}
	if err := c.startAPIServer(ctx, port); err != nil {
		return err
	}
	admin := c.restConfig("admin")
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	for _, dir := range c.o.crds {
		if err := c.kubectl(ctx, "admin", "apply", "--server-side", "--force-conflicts", "-f", dir); err != nil {
			return fmt.Errorf("installing CRDs from %s: %w", dir, err)
		}
	}
	if len(c.o.crds) > 0 {
		if err := c.kubectl(ctx, "admin", "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"); err != nil {
			return err
		}
	}
	if c.has["controller-manager"] {
		if err := c.startControllerManager(); err != nil {
			return err
		}
	}
	if c.has["scheduler"] {
		if err := c.startScheduler(); err != nil {
			return err
		}
	}
	if c.has["nodes"] {
		sim, err := newSimulator(cs, c.o.nodes)
		if err != nil {
			return err
		}
		if err := sim.start(context.Background()); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
	}
	if c.has["controller-manager"] {
		// The default ServiceAccount of the default namespace appears once the
		// service-account controller runs: pods can be admitted from then on.
		if err := waitFor(ctx, "the default ServiceAccount", func() (bool, error) {
			_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", getOpts)
			return err == nil, nil
		}); err != nil {
			return err
		}
	}
	return c.writeEnv()
}

func (c *cluster) startEtcd() error {
	cfg := embed.NewConfig()
	cfg.Name = "testcluster"
	cfg.Dir = filepath.Join(c.o.dir, "etcd")
	_ = os.RemoveAll(cfg.Dir)
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(c.logs, "etcd.log")}
	cfg.UnsafeNoFsync = true // throwaway data: fsync only costs time
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	c.etcd = e
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return errors.New("etcd did not become ready within 60s")
	}
	c.etcdURL = cu.String()
	return nil
}

// spawn starts one component with its output in DIR/logs/NAME.log. The child gets its
// own process group and is killed should this process die without stopping it.
func (c *cluster) spawn(name string, args ...string) error {
	log, err := os.Create(filepath.Join(c.logs, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(c.o.bin, name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	c.procs = append(c.procs, p)
	go func() {
		err := cmd.Wait()
		log.Close()
		close(p.done)
		if !c.stopping.Load() {
			c.exited <- fmt.Errorf("%s exited (%v); see %s", name, err, log.Name())
		}
	}()
	return nil
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func (c *cluster) startAPIServer(ctx context.Context, port int) error {
	p := c.pki
	err := c.spawn("kube-apiserver",
		"--etcd-servers="+c.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+p.path("apiserver.crt"),
		"--tls-private-key-file="+p.path("apiserver.key"),
		"--client-ca-file="+p.path("ca.crt"),
		"--token-auth-file="+p.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+p.path("sa.pub"),
		"--service-account-signing-key-file="+p.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// The API server's own endpoint would be 127.0.0.1, which Endpoints reject.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	)
	if err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(c.restConfig("admin"))
	if err != nil {
		return err
	}
	return waitFor(ctx, "kube-apiserver /readyz", func() (bool, error) {
		select {
		case err := <-c.exited:
			return false, err
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.server+"/readyz", nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func (c *cluster) startControllerManager() error {
	p := c.pki
	controllers := []string{
		"deployment-controller", "replicaset-controller", "statefulset-controller", "job-controller",
		"cronjob-controller", "garbage-collector-controller", "namespace-controller",
		"serviceaccount-controller", "serviceaccount-token-controller", "endpoints-controller",
		"endpointslice-controller", "endpointslice-mirroring-controller", "disruption-controller",
		"horizontal-pod-autoscaler-controller", "root-ca-certificate-publisher-controller",
		"ttl-after-finished-controller", "clusterrole-aggregation-controller",
		"resourcequota-controller", "resourceclaim-controller", "pod-garbage-collector-controller",
		"persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
		"persistentvolume-binder-controller",
	}
	return c.spawn("kube-controller-manager",
		"--kubeconfig="+c.componentKubeconfig("system:kube-controller-manager"),
		"--authentication-kubeconfig="+c.componentKubeconfig("system:kube-controller-manager"),
		"--authorization-kubeconfig="+c.componentKubeconfig("system:kube-controller-manager"),
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+p.path("sa.key"),
		"--root-ca-file="+p.path("ca.crt"),
		"--cluster-signing-cert-file="+p.path("ca.crt"),
		"--concurrent-gc-syncs=5",
		"--v=1",
	)
}

func (c *cluster) startScheduler() error {
	return c.spawn("kube-scheduler",
		"--kubeconfig="+c.componentKubeconfig("system:kube-scheduler"),
		"--authentication-kubeconfig="+c.componentKubeconfig("system:kube-scheduler"),
		"--authorization-kubeconfig="+c.componentKubeconfig("system:kube-scheduler"),
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--v=1",
	)
}

var getOpts = metav1.GetOptions{}

func (c *cluster) kubectl(ctx context.Context, user string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.o.bin, "kubectl"),
		append([]string{"--kubeconfig", filepath.Join(c.o.dir, "kubeconfig"), "--context", user}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (c *cluster) restConfig(user string) *rest.Config {
	return &rest.Config{
		Host:            c.server,
		BearerToken:     c.pki.tokens[user],
		TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.caCert},
		QPS:             200,
		Burst:           400,
	}
}

func (c *cluster) writeKubeconfigs() error {
	var b strings.Builder
	ca := base64.StdEncoding.EncodeToString(c.pki.caCert)
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\nclusters:\n- name: testcluster\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n", c.server, ca)
	b.WriteString("users:\n")
	for _, u := range []string{"admin", "alice", "bob"} {
		fmt.Fprintf(&b, "- name: %s\n  user:\n    token: %s\n", u, c.pki.tokens[u])
	}
	b.WriteString("contexts:\n")
	for _, u := range []string{"admin", "alice", "bob"} {
		fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: testcluster\n    user: %s\n    namespace: default\n", u, u)
	}
	b.WriteString("current-context: admin\n")
	if err := os.WriteFile(filepath.Join(c.o.dir, "kubeconfig"), []byte(b.String()), 0o600); err != nil {
		return err
	}
	for _, u := range []string{"system:kube-controller-manager", "system:kube-scheduler"} {
		var k strings.Builder
		fmt.Fprintf(&k, "apiVersion: v1\nkind: Config\nclusters:\n- name: testcluster\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n", c.server, ca)
		fmt.Fprintf(&k, "users:\n- name: u\n  user:\n    token: %s\ncontexts:\n- name: c\n  context:\n    cluster: testcluster\n    user: u\ncurrent-context: c\n", c.pki.tokens[u])
		if err := os.WriteFile(c.componentKubeconfig(u), []byte(k.String()), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (c *cluster) componentKubeconfig(user string) string {
	return c.pki.path(strings.ReplaceAll(user, ":", "-") + ".kubeconfig")
}

// writeEnv writes DIR/env: export KEY='value' lines a shell can source and a test can parse.
func (c *cluster) writeEnv() error {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	lines := []string{
		"export KUBECONFIG=" + q(filepath.Join(c.o.dir, "kubeconfig")),
		"export TESTCLUSTER_KUBECTL=" + q(filepath.Join(c.o.bin, "kubectl")),
		"export TESTCLUSTER_BIN=" + q(c.o.bin),
		"export TESTCLUSTER_SERVER=" + q(c.server),
		"export TESTCLUSTER_DIR=" + q(c.o.dir),
		"export TESTCLUSTER_COMPONENTS=" + q(c.o.components),
		fmt.Sprintf("export TESTCLUSTER_PID=%d", os.Getpid()),
	}
	return os.WriteFile(filepath.Join(c.o.dir, "env"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// stop ends the components in reverse order of their start, then etcd.
func (c *cluster) stop() {
	c.stopping.Store(true)
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	if c.etcd != nil {
		c.etcd.Close()
		_ = os.RemoveAll(filepath.Join(c.o.dir, "etcd"))
	}
	_ = os.Remove(filepath.Join(c.o.dir, "ready"))
}

func waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
