// SPDX-License-Identifier: Apache-2.0

// Command arbtable-dra is the arbtable DRA driver: a kubelet plugin that
// publishes the node's arbtable NICs as ResourceSlices and an NRI plugin
// that admits a pod's class when its network exists.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/stub"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/claimstatus"
	"arbtable.dev/dra/pkg/driver"
	"arbtable.dev/dra/pkg/events"
	"arbtable.dev/dra/pkg/kernel"
	"arbtable.dev/dra/pkg/metrics"
	"arbtable.dev/dra/pkg/nriplugin"
	"arbtable.dev/dra/pkg/podnet"
	"arbtable.dev/dra/pkg/slices"
)

type options struct {
	node, nics, checkpoint, child, rootMode, nriSocket, nriIndex, pluginDir, registrarDir string
	podName, podNamespace                                                                 string
	markMask, minorBase, rootMajor, systemMinor, systemShare, systemDistance              uint64
	markPrio, fwPrio                                                                      uint64
	systemRate                                                                            uint64
	republish, apiTimeout                                                                 time.Duration
	metricsAddress, webhookAddress, webhookCertDir                                        string
}

func parseFlags() (options, error) {
	var o options
	var err error
	flag.StringVar(&o.node, "node-name", os.Getenv("NODE_NAME"), "this node's name (NODE_NAME)")
	flag.StringVar(&o.podName, "pod-name", os.Getenv("POD_NAME"), "the driver's pod (POD_NAME): on SIGTERM, its DaemonSet gone means an uninstall, which releases what the driver made")
	flag.StringVar(&o.podNamespace, "pod-namespace", os.Getenv("POD_NAMESPACE"), "the driver pod's namespace (POD_NAMESPACE)")
	flag.StringVar(&o.nics, "nics", os.Getenv("ARBTABLE_NICS"), "comma-separated arbtable NICs, NAME[=RATE in bit/s, e.g. 10G, for a NIC of unknown speed] (ARBTABLE_NICS)")
	flag.StringVar(&o.checkpoint, "checkpoint", "/var/lib/kubelet/plugins/arbtable.dev/checkpoint.json", "checkpoint file")
	flag.StringVar(&o.pluginDir, "plugin-dir", "/var/lib/kubelet/plugins/arbtable.dev", "kubelet plugin data directory")
	flag.StringVar(&o.registrarDir, "registrar-dir", "/var/lib/kubelet/plugins_registry", "kubelet plugin registration directory")
	flag.StringVar(&o.child, "child", "fq_codel", "child qdisc of the classes on a locked root: fq_codel, fq, pfifo (a lockless root's classes take none)")
	flag.StringVar(&o.rootMode, "root-mode", kernel.RootAuto, "mode of the roots the driver makes: auto (lockless on a NIC with more than one transmit queue, locked on one), locked or lockless; an existing root keeps its mode")
	flag.StringVar(&o.nriSocket, "nri-socket", "/var/run/nri/nri.sock", "NRI socket")
	flag.StringVar(&o.nriIndex, "nri-index", "90", "NRI plugin index (after the network plugins)")
	flag.Uint64Var(&o.markMask, "mark-mask", 0x7f, "packet mark bits the driver owns (default avoids Cilium 16-31 and 0xf00, Calico 0xffff0000/0x1ff00000, kube-proxy 0x4000/0x8000)")
	flag.Uint64Var(&o.minorBase, "minor-base", 0x100, "class minors are minor-base + mark value")
	flag.Uint64Var(&o.rootMajor, "root-major", 1, "major of the arbtable root the driver creates")
	flag.Uint64Var(&o.systemMinor, "system-minor", 0xfffe, "minor of the system class (the root's default)")
	flag.Uint64Var(&o.systemShare, "system-share", 64, "LOW-table share of the system class when --system-rate is 0")
	flag.Uint64Var(&o.systemRate, "system-rate", 0, "HIGH rate, bytes/s, reserved for the node's own traffic (0: a LOW share)")
	flag.Uint64Var(&o.systemDistance, "system-distance", 64, "distance of the system class's HIGH rate")
	flag.Uint64Var(&o.markPrio, "mark-prio", 0xa7b, "prio of the mark filter on pods' host-side interfaces")
	flag.Uint64Var(&o.fwPrio, "fw-prio", 0xa7b, "prio of the fw filters on the roots")
	flag.DurationVar(&o.republish, "republish", 10*time.Second, "period of the reconcile loop: links, roots and classes checked, slices re-published")
	flag.DurationVar(&o.apiTimeout, "api-timeout", driver.DefaultAPITimeout, "bound on the API reads that find a pod's claims at sandbox start (below the runtime's NRI request timeout)")
	flag.StringVar(&o.metricsAddress, "metrics-address", "", "HOST:PORT serving /metrics, /healthz and /readyz (\"\": none)")
	flag.StringVar(&o.webhookAddress, "webhook-address", "", "HOST:PORT serving the pod admission webhook over TLS, which refuses a pod with two arbtable claims (\"\": none)")
	flag.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/etc/arbtable-dra/webhook", "directory of the webhook's tls.crt and tls.key (a Secret's volume)")
	klog.InitFlags(nil)
	flag.Parse()
	if o.node == "" {
		return o, errors.New("no node name (--node-name or NODE_NAME)")
	}
	if o.nics == "" {
		return o, errors.New("no NICs (--nics or ARBTABLE_NICS)")
	}
	if _, _, err := parseNICs(o.nics); err != nil {
		return o, err
	}
	childSet := false
	flag.Visit(func(f *flag.Flag) { childSet = childSet || f.Name == "child" })
	if o.rootMode, err = rootMode(o.rootMode, o.child, childSet); err != nil {
		return o, err
	}
	if o.markMask == 0 || o.markMask > 0xffffffff {
		return o, fmt.Errorf("--mark-mask %#x: a 32-bit mask", o.markMask)
	}
	if o.markMask&0xffff0000 != 0 || o.markMask&0x1ff00000 != 0 {
		klog.Warningf("--mark-mask %#x overlaps Cilium's identity bits (16-31) or Calico's 0x1ff00000", o.markMask)
	}
	return o, nil
}

// rootMode checks --root-mode against --child: a child asked for by name
// (childSet) with roots asked lockless is a contradiction, refused; with
// auto the child goes on the locked roots only.
func rootMode(mode, child string, childSet bool) (string, error) {
	m, err := kernel.ParseRootMode(mode)
	if err != nil {
		return "", fmt.Errorf("--root-mode: %w", err)
	}
	if m == kernel.RootLockless && childSet && child != "" {
		return "", fmt.Errorf("--child=%s with --root-mode=lockless: a lockless root's classes take no child qdisc; pass --root-mode=locked (or auto) for %s, or --child= for none", child, child)
	}
	return m, nil
}

// parseNICs reads --nics: NAME[=RATE],... where RATE, a Kubernetes
// quantity in bit/s ("200M", "10G"), is the capacity of the root the
// driver makes on a NIC whose link speed reads unknown (virtio, veth); it
// returns the names and the rates in bytes/s.
func parseNICs(spec string) ([]string, map[string]uint64, error) {
	var names []string
	rates := map[string]uint64{}
	for _, e := range strings.Split(spec, ",") {
		name, rate, hasRate := strings.Cut(strings.TrimSpace(e), "=")
		if name == "" {
			return nil, nil, fmt.Errorf("--nics %q: an empty NIC name", spec)
		}
		if hasRate {
			q, err := resource.ParseQuantity(rate)
			if err != nil {
				return nil, nil, fmt.Errorf("--nics: the rate of %s: %w", name, err)
			}
			bits, ok := q.AsInt64()
			if !ok || bits < 8 || bits > 8<<48 {
				return nil, nil, fmt.Errorf("--nics: the rate of %s, %s bit/s: not 8 bit/s to 2^51 bit/s", name, rate)
			}
			rates[name] = uint64(bits / 8)
		}
		names = append(names, name)
	}
	return names, rates, nil
}

func (o options) config() driver.Config {
	h := uint32(o.rootMajor) << 16
	names, rates, _ := parseNICs(o.nics) // checked by parseFlags
	return driver.Config{
		NodeName: o.node, NICs: names,
		Root: kernel.RootConfig{Handle: h, SystemMinor: uint32(o.systemMinor), SystemRate: o.systemRate,
			SystemDistance: uint32(o.systemDistance), SystemShare: uint32(o.systemShare), Child: o.child,
			Mode: o.rootMode, Rates: rates},
		MarkMask: uint32(o.markMask), MarkPrio: uint16(o.markPrio), FwPrio: uint16(o.fwPrio),
		MinorBase: uint32(o.minorBase), Child: o.child, Checkpoint: o.checkpoint, APITimeout: o.apiTimeout,
	}
}

// publisher is set once the kubelet plugin helper runs.
type publisher struct{ h *kubeletplugin.Helper }

func (p *publisher) PublishResources(ctx context.Context, res resourceslice.DriverResources) error {
	if p.h == nil {
		return errors.New("kubelet plugin helper not started")
	}
	return p.h.PublishResources(ctx, res)
}

// podSource reads a pod and a claim for the driver at sandbox time.
type podSource struct{ c kubernetes.Interface }

func (s podSource) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return s.c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

func (s podSource) GetClaim(ctx context.Context, ns, name string) (*resourceapi.ResourceClaim, error) {
	return s.c.ResourceV1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
}

func (s podSource) GetClaimTemplate(ctx context.Context, ns, name string) (*resourceapi.ResourceClaimTemplate, error) {
	return s.c.ResourceV1().ResourceClaimTemplates(ns).Get(ctx, name, metav1.GetOptions{})
}

func runNRI(ctx context.Context, o options, p *nriplugin.Plugin, health *metrics.Health) {
	logger := klog.FromContext(ctx)
	for ctx.Err() == nil {
		s, err := stub.New(p, stub.WithPluginName("arbtable-dra"), stub.WithPluginIdx(o.nriIndex),
			stub.WithSocketPath(o.nriSocket))
		if err == nil {
			err = runStub(ctx, s, health)
		}
		if ctx.Err() != nil {
			return
		}
		// the runtime restarted or NRI is off: pods without claims are
		// unaffected; pods with claims wait in RunPodSandbox's absence
		logger.Error(err, "NRI connection ended; reconnecting", "socket", o.nriSocket)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	logger := klog.FromContext(ctx)

	rc, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster config: %w", err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	k, err := kernel.OpenLinux()
	if err != nil {
		return err
	}
	defer k.Close()

	cfg := o.config()
	// a NIC whose root cannot be made is not fatal: the node and its pods
	// keep working, and the reconcile loop taints it (or leaves it out)
	// until the root can be made
	for _, nic := range cfg.NICs {
		if err := k.EnsureRoot(nic, cfg.Root); err != nil {
			logger.Error(err, "NIC not served for now", "nic", nic)
		}
	}
	pub := &publisher{}
	d, err := driver.New(cfg, k, pub, &claimstatus.Writer{Client: client})
	if err != nil {
		return err
	}
	d.SetPodSource(podSource{c: client})
	rec := events.NewRecorder(client, o.node)
	defer rec.Shutdown()
	d.Events = rec
	if err := d.ReconcileKernel(ctx); err != nil {
		logger.Error(err, "reconciling the checkpoint with the kernel")
	}
	// the probes first: liveness while the driver waits for NRI
	health := &metrics.Health{}
	if _, err := serveMetrics(ctx, o.metricsAddress, &metrics.Collector{NICs: cfg.NICs, K: k, Claims: d.Records}, health); err != nil {
		return fmt.Errorf("--metrics-address: %w", err)
	}
	// the admission webhook: it needs nothing of the node
	if _, err := serveWebhook(ctx, o.webhookAddress, o.webhookCertDir, podSource{c: client}, o.apiTimeout); err != nil {
		return fmt.Errorf("--webhook-address: %w", err)
	}
	// then the NRI hook: the kubelet prepares a claim only once the
	// plugin is registered, and a sandbox started before the runtime knew
	// the hook would run unshaped; until NRI connects no claim is prepared
	// here and its pods wait in ContainerCreating
	connected := make(chan struct{})
	go runNRI(ctx, o, &nriplugin.Plugin{D: d, Net: podnet.Linux{}, Failed: d.PodFailed, Connected: connected}, health)
	logger.Info("waiting for the runtime's NRI before registering with the kubelet", "socket", o.nriSocket)
	select {
	case <-connected:
	case <-ctx.Done():
		return nil
	}
	h, err := kubeletplugin.Start(ctx, d,
		kubeletplugin.KubeClient(client),
		kubeletplugin.NodeName(o.node),
		kubeletplugin.DriverName(slices.DriverName),
		kubeletplugin.PluginDataDirectoryPath(o.pluginDir),
		kubeletplugin.RegistrarDirectoryPath(o.registrarDir),
		// DRAResourceHealth: WatchHealthStatus reports a tainted NIC's
		// devices unhealthy; the probes are --metrics-address's
		kubeletplugin.HealthService(true),
	)
	if err != nil {
		return fmt.Errorf("starting the kubelet plugin: %w", err)
	}
	defer h.Stop()
	pub.h = h
	// readiness follows each pass's publish, not a NIC's own error (a
	// NIC it cannot serve is published tainted)
	d.OnPublish = health.SetPublished
	// the first pass: roots made again, NICs tainted, slices published
	if err := d.Reconcile(ctx); err != nil {
		logger.Error(err, "reconciling the NICs")
	}
	// the reconcile loop (driver/reconcile.go): links, speeds, mtus,
	// roots and classes changed under the driver, then a publish (the
	// helper updates slices only when they differ)
	go func() {
		t := time.NewTicker(o.republish)
		defer t.Stop()
		d.Run(ctx, t.C)
	}()
	// a NIC's link events start a pass at once, not at the next tick
	go func() {
		if err := kernel.WatchLinks(ctx, cfg.NICs, d.Trigger); err != nil {
			logger.Error(err, "link events: the loop's period alone")
		}
	}()
	// the DaemonSet watched from the start: an uninstall deletes the
	// RBAC before the SIGTERM
	dsw := newDSWatch(client, o.podNamespace, o.podName)
	if o.podName != "" && o.podNamespace != "" {
		go dsw.run(ctx)
	}
	logger.Info("arbtable-dra running", "node", o.node, "nics", cfg.NICs, "markMask", strconv.FormatUint(o.markMask, 16))
	<-ctx.Done()
	// a restart or rollout releases nothing (the next instance
	// reconciles); an uninstall releases what the driver made
	if o.podName == "" || o.podNamespace == "" {
		logger.Info("stopping; no --pod-name/--pod-namespace, so an uninstall cannot be told from a restart: nothing released")
		return nil
	}
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	gone, err := dsw.uninstalled(sctx)
	switch {
	case err != nil:
		logger.Error(err, "stopping; an uninstall cannot be told from a restart: nothing released")
	case gone:
		logger.Info("stopping for an uninstall (the DaemonSet is deleted): releasing the marks, classes and roots the driver made")
		if err := d.Uninstall(sctx); err != nil {
			logger.Error(err, "uninstall")
		}
	default:
		logger.Info("stopping for a restart: nothing released")
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "arbtable-dra:", err)
		os.Exit(1)
	}
}
