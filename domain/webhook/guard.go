package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/fideliza/fideliza/tracing"
)

// Timeout bounds one attempt, from connecting to reading the answer.
const Timeout = 10 * time.Second

// Guard says which destinations deliveries may reach. By default only public
// addresses: never loopback, private, link-local (cloud metadata included),
// shared, multicast or unspecified ones.
type Guard struct {
	// AllowLoopback lets deliveries reach 127.0.0.0/8 and ::1, and plain
	// http there: local development and tests.
	AllowLoopback bool
}

// ErrForbiddenAddress is the error of a destination the guard refuses.
var ErrForbiddenAddress = errors.New("destination address not allowed")

// blocked are the ranges no delivery reaches, besides what netip's
// predicates name (private, loopback, link-local, multicast, unspecified).
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: would reach the IPv4 ranges refused here
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// Allowed reports whether a delivery may connect to ip.
func (g Guard) Allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if g.AllowLoopback && ip.IsLoopback() {
		return true
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckURL says whether url may be registered: an absolute https URL (http
// only where loopback is allowed) without credentials, whose host, when it
// is an IP address, is one deliveries may reach. Names are checked again on
// every connection, after they resolve. A refusal says why, and a loopback
// one how development allows it.
func (g Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return errors.New("must be an absolute URL")
	case u.Scheme != "https" && u.Scheme != "http":
		return errors.New("must use https")
	case u.User != nil:
		return errors.New("must not carry credentials")
	case u.Fragment != "":
		return errors.New("must not have a fragment")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	ip, ipErr := netip.ParseAddr(host)
	loopback := host == "localhost" || strings.HasSuffix(host, ".localhost") || (ipErr == nil && ip.Unmap().IsLoopback())
	switch {
	case loopback && !g.AllowLoopback:
		return fmt.Errorf("%s is a loopback address: webhooks reach public addresses only; "+
			"for local development, start serve and worker with --webhook-allow-loopback (FIDELIZA_WEBHOOK_ALLOW_LOOPBACK)", host)
	case loopback:
		return nil // http too
	case ipErr == nil && !g.Allowed(ip):
		return fmt.Errorf("%s is not a public address (private, link-local or reserved): webhooks reach public addresses only", host)
	case u.Scheme != "https":
		return errors.New("must use https (plain http only on loopback, in development)")
	}
	return nil
}

// control refuses a connection to an address the guard does not allow. It
// runs after name resolution, on the address actually dialled, so a name
// that resolves (or re-resolves) to a private address is refused too.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if !g.Allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// Sender sends deliveries through an HTTP client bound by a guard.
type Sender struct {
	client *http.Client
}

// NewSender returns a sender whose every connection the guard checks. It
// uses no proxy (a proxy would connect on its behalf, unchecked) and follows
// no redirect (a redirect is an answer, and a failed one).
func NewSender(g Guard) *Sender {
	dialer := &net.Dialer{Timeout: Timeout, Control: g.control}
	return &Sender{client: &http.Client{
		Timeout: Timeout,
		// Traced, a delivery is a client span whose traceparent the
		// request carries.
		Transport: tracing.Transport(&http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   Timeout,
			ResponseHeaderTimeout: Timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		}),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}
