#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes arbtable-dra's admission webhook key pair and installs the webhook:
#   webhook-cert.sh [--namespace NS] [--days N] [--ip IP]... [--url URL]
#                   [--secret-only]
# A CA and a serving certificate for the Service's names
# (arbtable-dra-webhook.NS.svc and its short forms, plus each --ip) made
# with openssl; Secret NS/arbtable-dra-webhook (type kubernetes.io/tls)
# created or replaced with them; then webhook.yaml.in applied with the CA as
# its caBundle (and the namespace NS). --url: the API server calls URL
# instead of the Service (a control plane that cannot reach the nodes'
# addresses, e.g. through a port forwarded to one node; give its host as
# --ip). --secret-only: the Secret alone, and the CA printed as base64
# for the Helm chart's webhookCABundle. kubectl is $KUBECTL (default
# kubectl). Run again to renew: the driver reads the new pair when the
# kubelet updates the Secret's volume, without a restart.
set -euo pipefail
ns=kube-system days=365 url= secret_only= ips=()
while [ $# -gt 0 ]; do
	case $1 in
	--namespace) ns=$2; shift 2 ;;
	--days) days=$2; shift 2 ;;
	--ip) ips+=("$2"); shift 2 ;;
	--url) url=$2; shift 2 ;;
	--secret-only) secret_only=1; shift ;;
	-h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "webhook-cert.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
KUBECTL=${KUBECTL:-kubectl}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
svc=arbtable-dra-webhook
san="DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local"
for ip in "${ips[@]}"; do san="$san,IP:$ip"; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
	-subj "/CN=arbtable-dra-webhook-ca" -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-subj "/CN=$svc.$ns.svc" -keyout "$tmp/tls.key" -out "$tmp/tls.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$san" >"$tmp/ext"
openssl x509 -req -in "$tmp/tls.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
	-days "$days" -extfile "$tmp/ext" -out "$tmp/tls.crt" 2>/dev/null
$KUBECTL -n "$ns" create secret tls arbtable-dra-webhook --cert="$tmp/tls.crt" --key="$tmp/tls.key" \
	--dry-run=client -o yaml | $KUBECTL apply -f - >/dev/null
ca=$(base64 -w0 <"$tmp/ca.crt")
if [ -n "$secret_only" ]; then
	echo "$ca"
	exit 0
fi
sed -e "s|caBundle: Q0FfQlVORExF.*|caBundle: $ca|" -e "s|namespace: kube-system|namespace: $ns|g" \
	${url:+-e "s|service: {.*}|url: \"$url\"|"} "$here/webhook.yaml.in" | $KUBECTL apply -f - >/dev/null
echo "webhook-cert.sh: Secret $ns/arbtable-dra-webhook and ValidatingWebhookConfiguration arbtable-dra (${url:-Service $svc.$ns}) applied"
