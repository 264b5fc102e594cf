package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// nodeSpec is one simulated node as the --nodes file describes it.
type nodeSpec struct {
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
	Capacity map[string]string `json:"capacity"`
	Taints   []corev1.Taint    `json:"taints"`
}

func defaultNodes() []nodeSpec {
	var nodes []nodeSpec
	for i := 0; i < 4; i++ {
		nodes = append(nodes, nodeSpec{
			Name:   fmt.Sprintf("gpu-node-%d", i),
			Labels: map[string]string{"nvidia.com/gpu.present": "true"},
			Capacity: map[string]string{
				"cpu": "128", "memory": "1Ti", "pods": "110", "ephemeral-storage": "2Ti", "nvidia.com/gpu": "8",
			},
		})
	}
	return nodes
}

// simulator stands in for the kubelets of its nodes: the nodes are Ready, a pod bound
// to one of them runs and turns Ready at once (a Job's pod succeeds), and a pod being
// deleted is removed as a kubelet would once its containers stopped.
type simulator struct {
	cs    kubernetes.Interface
	nodes []nodeSpec
	names map[string]bool
	queue workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	ips   int
}

func newSimulator(cs kubernetes.Interface, file string) (*simulator, error) {
	nodes := defaultNodes()
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		nodes = nil
		if err := json.Unmarshal(raw, &nodes); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	s := &simulator{cs: cs, nodes: nodes, names: map[string]bool{}}
	for _, n := range nodes {
		s.names[n.Name] = true
	}
	s.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	return s, nil
}

func (s *simulator) start(ctx context.Context) error {
	for i, spec := range s.nodes {
		if err := s.createNode(ctx, i, spec); err != nil {
			return err
		}
	}
	lw := cache.NewListWatchFromClient(s.cs.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		fields.OneTermNotEqualSelector("spec.nodeName", ""))
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { s.enqueue(obj) },
			UpdateFunc: func(_, obj any) { s.enqueue(obj) },
		},
	})
	go informer.Run(ctx.Done())
	for i := 0; i < 4; i++ {
		go func() {
			for s.next(ctx) {
			}
		}()
	}
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("pod informer did not sync")
	}
	return nil
}

func (s *simulator) createNode(ctx context.Context, i int, spec nodeSpec) error {
	capacity := corev1.ResourceList{}
	for k, v := range spec.Capacity {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("node %s capacity %s: %w", spec.Name, k, err)
		}
		capacity[corev1.ResourceName(k)] = q
	}
	labels := map[string]string{
		"kubernetes.io/hostname": spec.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "testcluster-simulated",
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: spec.Taints, PodCIDR: fmt.Sprintf("10.244.%d.0/24", i)},
	}
	created, err := s.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	created.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "simulated", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: now},
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.0.%d", 10+i)},
			{Type: corev1.NodeHostName, Address: spec.Name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: "v1.37.2-simulated", OperatingSystem: "linux", Architecture: "amd64",
			ContainerRuntimeVersion: "simulated://1", OSImage: "testcluster",
		},
	}
	updated, err := s.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	// The API server's admission taints a new node not-ready; the node lifecycle
	// controller lifts the taint once the kubelet reports Ready. That controller is not
	// run (it would want kubelet heartbeats), so the simulator lifts it.
	var taints []corev1.Taint
	for _, t := range updated.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			taints = append(taints, t)
		}
	}
	if len(taints) == len(updated.Spec.Taints) {
		return nil
	}
	updated.Spec.Taints = taints
	_, err = s.cs.CoreV1().Nodes().Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

func (s *simulator) enqueue(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !s.names[pod.Spec.NodeName] {
		return
	}
	if pod.DeletionTimestamp == nil && podDone(pod) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err == nil {
		s.queue.Add(key)
	}
}

func podDone(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return true
	case corev1.PodRunning:
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue
			}
		}
	}
	return false
}

func (s *simulator) next(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	if err := s.sync(ctx, key); err != nil {
		s.queue.AddRateLimited(key)
		return true
	}
	s.queue.Forget(key)
	return true
}

func (s *simulator) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pods := s.cs.CoreV1().Pods(ns)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		zero := int64(0)
		err := pods.Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	if podDone(pod) {
		return nil
	}
	s.run(pod)
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// run fills in the status a kubelet would report for pod: running and ready, or, for a
// Job's pod, succeeded.
func (s *simulator) run(pod *corev1.Pod) {
	now := metav1.NewTime(time.Now())
	job := false
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "Job" {
			job = true
		}
	}
	st := &pod.Status
	if st.PodIP == "" {
		s.mu.Lock()
		s.ips++
		n := s.ips
		s.mu.Unlock()
		st.PodIP = fmt.Sprintf("10.244.%d.%d", 100+n/250, 1+n%250)
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	for i, n := range s.nodes {
		if n.Name == pod.Spec.NodeName {
			st.HostIP = fmt.Sprintf("10.0.0.%d", 10+i)
			st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
		}
	}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	ready := corev1.ConditionTrue
	st.Phase = corev1.PodRunning
	if job {
		st.Phase = corev1.PodSucceeded
		ready = corev1.ConditionFalse
	}
	cond := func(t corev1.PodConditionType, v corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: v, LastTransitionTime: now}
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue),
		cond(corev1.PodInitialized, corev1.ConditionTrue),
		cond(corev1.ContainersReady, ready),
		cond(corev1.PodReady, ready),
		cond(corev1.PodScheduled, corev1.ConditionTrue),
	}
	terminated := func(c corev1.Container) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "simulated://" + c.Image, ContainerID: "simulated://" + c.Name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		}
	}
	st.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways && !job {
			st.InitContainerStatuses = append(st.InitContainerStatuses, running(c, now))
		} else {
			st.InitContainerStatuses = append(st.InitContainerStatuses, terminated(c))
		}
	}
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		if job {
			st.ContainerStatuses = append(st.ContainerStatuses, terminated(c))
		} else {
			st.ContainerStatuses = append(st.ContainerStatuses, running(c, now))
		}
	}
}

func running(c corev1.Container, now metav1.Time) corev1.ContainerStatus {
	started := true
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: "simulated://" + c.Image, ContainerID: "simulated://" + c.Name,
		Ready: true, Started: &started,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}
}
