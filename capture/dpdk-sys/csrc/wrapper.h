/* Headers bindgen reads, plus the shim's prototypes. */
#include <rte_config.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_version.h>

/* static inline DPDK functions and macros, wrapped (shim.c). */
uint16_t shim_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
void shim_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned int n);
const uint8_t *shim_mbuf_data(const struct rte_mbuf *m, uint16_t *data_len, uint32_t *pkt_len);
uint32_t shim_mbuf_rss(const struct rte_mbuf *m, int *valid);
int shim_errno(void);
unsigned int shim_lcore_id(void);
unsigned int shim_lcore_id_any(void);
uint64_t shim_rss_hf_ip_tcp_udp(void);
uint16_t shim_mbuf_default_buf_size(void);
struct rte_mbuf *shim_mbuf_from_bytes(struct rte_mempool *mp, const uint8_t *data, uint16_t len);
