"""TRex stateless (STL) profile: fixed-size UDP frames for RFC 2544 runs against shrike.

TRex (https://trex-tgn.cisco.com) drives DPDK NICs at line rate (14.88 Mpps per 10 GbE port at
64 bytes, 37.2 Mpps at 25 GbE), which neither tcpreplay nor a single-core software generator
reaches. Load it from the TRex console on the generator host, with the generator's port cabled
to the sensor's capture port (or to the switch port mirrored to it):

    trex> start -f trex_udp.py -m 10mpps -t size=64,flows=1024 --port 0
    trex> stats
    trex> stop

Tunables (-t name=value,...):
    size   frame size in bytes including the 4-byte FCS (64..9018; default 64)
    flows  number of UDP flows (source IP and port vary together; default 1024), so the
           sensor's RSS queues or AF_PACKET fanout workers share the load evenly

For an RFC 2544 search run it from the TRex Python API (trex_stl_lib): for each frame size,
binary-search the multiplier (-m) and compare TRex's opackets with the sensor's received
packets (`shrike ctl stats` → capture.kernel_packets minus capture.kernel_drops, or the
shrike_packets_total / shrike_drops_total Prometheus series), as scripts/rfc2544.sh does with
tcpreplay on a veth pair. Addresses are RFC 2544's benchmarking range 198.18.0.0/15.
"""

from trex_stl_lib.api import (  # type: ignore[import-not-found]
    STLFlowStats,
    STLPktBuilder,
    STLProfile,
    STLScVmRaw,
    STLStream,
    STLTXCont,
    STLVmFixIpv4,
    STLVmFlowVar,
    STLVmWrFlowVar,
    Ether,
    IP,
    UDP,
)

FCS = 4
HEADERS = 14 + 20 + 8


class ShrikeUdp:
    """One continuous stream of fixed-size UDP frames over `flows` flows."""

    def create_stream(self, size: int, flows: int, pg_id: int | None = None):
        if not 64 <= size <= 9018:
            raise ValueError(f"size {size}: expected 64..9018")
        flows = max(1, min(int(flows), 65535))
        base = Ether(dst="02:00:5e:10:00:01", src="02:00:5e:10:00:02") / IP(
            src="198.18.0.1", dst="198.19.0.1", ttl=64
        ) / UDP(sport=1024, dport=9)
        pad = max(0, size - FCS - HEADERS)
        pkt = base / (b"\xa5" * pad)
        vm = STLScVmRaw(
            [
                # One counter drives both the source address and port: `flows` distinct
                # 5-tuples, each direction-consistent for the sensor's flow table.
                STLVmFlowVar(name="flow", min_value=0, max_value=flows - 1, size=2, op="inc"),
                STLVmWrFlowVar(fv_name="flow", pkt_offset="IP.src", offset_fixup=2),
                STLVmWrFlowVar(fv_name="flow", pkt_offset="UDP.sport", add_value=1024),
                STLVmFixIpv4(offset="IP"),
            ]
        )
        return STLStream(
            packet=STLPktBuilder(pkt=pkt, vm=vm),
            mode=STLTXCont(pps=1),
            flow_stats=STLFlowStats(pg_id=pg_id) if pg_id is not None else None,
        )

    def get_streams(self, tunables=None, direction=0, **kwargs):
        t = dict(size=64, flows=1024)
        if isinstance(tunables, dict):
            t.update(tunables)
        elif isinstance(tunables, list):  # TRex >= 3.0 passes -t as argv-style list
            for item in tunables:
                k, _, v = str(item).lstrip("-").partition("=")
                if k in t and v:
                    t[k] = v
        t.update({k: v for k, v in kwargs.items() if k in t})
        return [self.create_stream(int(t["size"]), int(t["flows"]))]


def register():
    """Entry point TRex calls to load the profile."""
    return ShrikeUdp()


if __name__ == "__main__":
    print(__doc__)
    _ = STLProfile  # keep the import used for linters; profiles are loaded by TRex
