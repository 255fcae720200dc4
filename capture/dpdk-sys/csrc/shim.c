/* Out-of-line copies of DPDK's static inline functions and macros, which bindgen cannot
 * bind. Each is a one-line wrapper. */
#include "wrapper.h"

uint16_t shim_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

void shim_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned int n)
{
	rte_pktmbuf_free_bulk(pkts, n);
}

const uint8_t *shim_mbuf_data(const struct rte_mbuf *m, uint16_t *data_len, uint32_t *pkt_len)
{
	*data_len = m->data_len;
	*pkt_len = m->pkt_len;
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

uint32_t shim_mbuf_rss(const struct rte_mbuf *m, int *valid)
{
	*valid = (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0;
	return m->hash.rss;
}

int shim_errno(void)
{
	return rte_errno;
}

unsigned int shim_lcore_id(void)
{
	return rte_lcore_id();
}

unsigned int shim_lcore_id_any(void)
{
	return LCORE_ID_ANY;
}

uint64_t shim_rss_hf_ip_tcp_udp(void)
{
	return RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
}

uint16_t shim_mbuf_default_buf_size(void)
{
	return RTE_MBUF_DEFAULT_BUF_SIZE;
}

struct rte_mbuf *shim_mbuf_from_bytes(struct rte_mempool *mp, const uint8_t *data, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return NULL;
	char *p = rte_pktmbuf_append(m, len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(p, data, len);
	return m;
}
