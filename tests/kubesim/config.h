/* kubesim's run-time configuration (command-line flags; see main.c). */
#ifndef KS_CONFIG_H
#define KS_CONFIG_H

#include <stddef.h>

typedef struct ks_config_s {
    char addr[64];          /* always a loopback address */
    int port;               /* 0 picks a free port */
    char port_file[1024];   /* where the bound port is written */
    char state_dir[1024];   /* sandboxes, logs, volumes, certs */
    char schemas_dir[1024]; /* ../shared/k8s-schemas */
    char nodes_file[1024];  /* JSON node inventory; "" = default */
    char state_file[1024];  /* persisted objects; "" = none */
    char token[256];        /* bearer token required when set */
    int tls;                /* serve HTTPS with a generated cert */
    int simulated;          /* default pod mode: simulated */
    double backoff_base;    /* job pod failure back-off base (s) */
    double bookmark_secs;   /* watch bookmark interval */
    double sim_duration;    /* default simulated pod run time (s) */
    double grace_secs;      /* cap on pod termination grace */
    size_t ring_cap;        /* watch event window: most events kept */
    size_t ring_bytes;      /* ... and most bytes of event text kept */
    char map_paths[512];    /* always-mapped path prefixes ("/data,...") */
    int events;             /* emit core/v1 Events */
    double cool_secs;       /* sweep period of the store's cold objects; 0 = off */
    int verbose;
} ks_config_t;

extern ks_config_t ks_cfg;

#endif
