"""Sample lines of real log styles, written from each format's documentation, and the records a
reader of that style expects: timestamp (UTC), level, message. Each style has an ERROR, a WARN
and an INFO line, a multi-line record where the style has them, and, where it can occur, a
malformed line, which joins the record before it.

The files are last written at ``MODIFIED`` (the year of year-less styles comes from it).
"""

from __future__ import annotations

from datetime import datetime, timezone

MODIFIED = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)

Expected = list[tuple[str, str, str]]

# fmt: off
SAMPLES: dict[str, tuple[str, Expected]] = {
    # bunyan: numeric levels (60 fatal, 50 error, 40 warn, 30 info), err.stack on errors (its first
    # line repeats the message when the error itself is logged)
    "bunyan": (
        '{"name":"cart","hostname":"web-1","pid":12,"level":50,"msg":"checkout failed","time":"2024-05-01T10:00:01.123Z","v":0,"err":{"message":"connect ECONNREFUSED 10.0.0.9:5432","name":"Error","stack":"Error: connect ECONNREFUSED 10.0.0.9:5432\\n    at TCPConnectWrap.afterConnect (node:net:1555:16)"}}\n'
        '{"name":"cart","hostname":"web-1","pid":12,"level":40,"msg":"cache miss rate high","time":"2024-05-01T10:00:02.000Z","v":0}\n'
        '{"name":"cart","hostname":"web-1","pid":12,"level":30,"msg":"listening on :8080","time":"2024-05-01T10:00:03.000Z","v":0}\n'
        '{"name":"cart","level":30,"msg":"cut short\n'
        '{"name":"cart","hostname":"web-1","pid":12,"level":60,"msg":"out of memory","time":"2024-05-01T10:00:04.000Z","v":0}\n'
        '{"name":"cart","hostname":"web-1","pid":12,"level":50,"msg":"connect ETIMEDOUT 10.0.0.9:6379","time":"2024-05-01T10:00:05.000Z","v":0,"err":{"message":"connect ETIMEDOUT 10.0.0.9:6379","name":"Error","stack":"Error: connect ETIMEDOUT 10.0.0.9:6379\\n    at Socket._onTimeout (node:net:590:8)"}}\n',
        [
            (
                "2024-05-01T10:00:01.123Z",
                "ERROR",
                "checkout failed\nError: connect ECONNREFUSED 10.0.0.9:5432\n"
                "    at TCPConnectWrap.afterConnect (node:net:1555:16)",
            ),
            ("2024-05-01T10:00:02.000Z", "WARN", "cache miss rate high"),
            ("2024-05-01T10:00:03.000Z", "INFO", 'listening on :8080\n{"name":"cart","level":30,"msg":"cut short'),
            ("2024-05-01T10:00:04.000Z", "ERROR", "out of memory"),
            ("2024-05-01T10:00:05.000Z", "ERROR", "connect ETIMEDOUT 10.0.0.9:6379\n    at Socket._onTimeout (node:net:590:8)"),
        ],
    ),
    # pino: bunyan's numbers, epoch milliseconds
    "pino": (
        '{"level":50,"time":1714557601123,"pid":7,"hostname":"web-2","msg":"request failed","err":{"type":"Error","message":"timeout","stack":"Error: timeout\\n    at Timeout._onTimeout (/app/db.js:40:11)"}}\n'
        '{"level":40,"time":1714557602123,"pid":7,"hostname":"web-2","msg":"slow request"}\n'
        '{"level":30,"time":1714557603123,"pid":7,"hostname":"web-2","msg":"server listening"}\n',
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", "request failed\nError: timeout\n    at Timeout._onTimeout (/app/db.js:40:11)"),
            ("2024-05-01T10:00:02.123Z", "WARN", "slow request"),
            ("2024-05-01T10:00:03.123Z", "INFO", "server listening"),
        ],
    ),
    # PostgreSQL stderr, log_line_prefix '%m [%p] ' (and '%t'); DETAIL/STATEMENT lines continue
    "postgres": (
        "2024-05-01 10:00:01.123 UTC [1234] LOG:  database system is ready to accept connections\n"
        '2024-05-01 10:00:02.456 UTC [1240] ERROR:  duplicate key value violates unique constraint "orders_pkey"\n'
        "2024-05-01 10:00:02.456 UTC [1240] DETAIL:  Key (id)=(42) already exists.\n"
        "2024-05-01 10:00:02.456 UTC [1240] STATEMENT:  INSERT INTO orders (id)\n"
        "\t  VALUES (42);\n"
        "2024-05-01 10:00:03.000 UTC [1241] WARNING:  there is no transaction in progress\n"
        "LOG:  a line without its prefix\n"
        '2024-05-01 10:00:04 UTC [1242] FATAL:  password authentication failed for user "app"\n'
        '2024-05-01 18:00:05.000+08 [1243] PANIC:  could not write to file "pg_wal/xlogtemp.1243"\n',
        [
            ("2024-05-01T10:00:01.123Z", "INFO", "[1234] LOG:  database system is ready to accept connections"),
            (
                "2024-05-01T10:00:02.456Z",
                "ERROR",
                '[1240] ERROR:  duplicate key value violates unique constraint "orders_pkey"\n'
                "[1240] DETAIL:  Key (id)=(42) already exists.\n"
                "[1240] STATEMENT:  INSERT INTO orders (id)\n\t  VALUES (42);",
            ),
            ("2024-05-01T10:00:03.000Z", "WARN", "[1241] WARNING:  there is no transaction in progress\nLOG:  a line without its prefix"),
            ("2024-05-01T10:00:04.000Z", "ERROR", '[1242] FATAL:  password authentication failed for user "app"'),
            ("2024-05-01T10:00:05.000Z", "ERROR", '[1243] PANIC:  could not write to file "pg_wal/xlogtemp.1243"'),
        ],
    ),
    # PostgreSQL csvlog (16 columns of PostgreSQL 16); a quoted query spans two lines
    "csvlog": (
        '2024-05-01 10:00:01.123 UTC,"app","shop",1240,"10.0.0.5:51234",6631f0a1.4d8,1,"INSERT",2024-05-01 09:59:00 UTC,3/45,0,ERROR,23505,"duplicate key value violates unique constraint ""orders_pkey""","Key (id)=(42) already exists.",,,,,"INSERT INTO orders (id, note)\n'
        "VALUES (42, 'a,b')\",,,\"orders-api\",\"client backend\",,0\n"
        '2024-05-01 10:00:02.000 UTC,,,900,,6631f0a1.384,2,,2024-05-01 09:00:00 UTC,,0,LOG,00000,"checkpoint starting: time",,,,,,,,,"","checkpointer",,0\n'
        "2024-05-01 10:00:02.500 UTC,not,enough,columns\n"
        '2024-05-01 10:00:03.000 UTC,"app","shop",1241,"10.0.0.6:5000",6631f0a1.4d9,1,"idle",2024-05-01 09:59:00 UTC,3/46,0,WARNING,25P01,"there is no transaction in progress",,,,,,,,,"psql","client backend",,0\n',
        [
            (
                "2024-05-01T10:00:01.123Z",
                "ERROR",
                "[1240] user=app,db=shop,app=orders-api,client=10.0.0.5:51234 ERROR:  "
                'duplicate key value violates unique constraint "orders_pkey"\n'
                "DETAIL:  Key (id)=(42) already exists.\n"
                "STATEMENT:  INSERT INTO orders (id, note)\nVALUES (42, 'a,b')",
            ),
            ("2024-05-01T10:00:02.000Z", "INFO", "[900] LOG:  checkpoint starting: time\n2024-05-01 10:00:02.500 UTC,not,enough,columns"),
            ("2024-05-01T10:00:03.000Z", "WARN", "[1241] user=app,db=shop,app=psql,client=10.0.0.6:5000 WARNING:  there is no transaction in progress"),
        ],
    ),
    "nginx_error": (
        '2024/05/01 10:00:01 [error] 12#12: *3 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.1, upstream: "http://10.0.0.9:8080/api"\n'
        "2024/05/01 10:00:02 [warn] 12#12: *4 an upstream response is buffered to a temporary file\n"
        "2024/05/01 10:00:03 [notice] 1#1: signal process started\n"
        "2024/05/01 not a time [error]\n"
        "2024/05/01 10:00:04 [crit] 12#12: *5 SSL_do_handshake() failed\n",
        [
            ("2024-05-01T10:00:01.000Z", "ERROR", '12#12: *3 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.1, upstream: "http://10.0.0.9:8080/api"'),
            ("2024-05-01T10:00:02.000Z", "WARN", "12#12: *4 an upstream response is buffered to a temporary file"),
            ("2024-05-01T10:00:03.000Z", "INFO", "1#1: signal process started\n2024/05/01 not a time [error]"),
            ("2024-05-01T10:00:04.000Z", "ERROR", "12#12: *5 SSL_do_handshake() failed"),
        ],
    ),
    # RFC 3164: severity from PRI when present, else from the message; the year from the mtime
    "syslog3164": (
        "<27>May  1 10:00:01 web-1 payments[4121]: connection to 10.0.0.9:5432 refused\n"
        "<28>May  1 10:00:02 web-1 payments[4121]: retrying in 5s\n"
        "<30>May  1 10:00:03 web-1 payments[4121]: started\n"
        "May  1 10:00:04 web-1 sshd[99]: error: maximum authentication attempts exceeded for root\n"
        "a line without a header\n"
        "Dec 31 23:59:59 web-1 CRON[1]: (root) CMD (logrotate)\n",
        [
            ("2023-12-31T23:59:59.000Z", "INFO", "web-1 CRON[1]: (root) CMD (logrotate)"),
            ("2024-05-01T10:00:01.000Z", "ERROR", "web-1 payments[4121]: connection to 10.0.0.9:5432 refused"),
            ("2024-05-01T10:00:02.000Z", "WARN", "web-1 payments[4121]: retrying in 5s"),
            ("2024-05-01T10:00:03.000Z", "INFO", "web-1 payments[4121]: started"),
            ("2024-05-01T10:00:04.000Z", "ERROR", "web-1 sshd[99]: error: maximum authentication attempts exceeded for root\na line without a header"),
        ],
    ),
    # RFC 5424's own examples (section 6.5) and a warning
    "syslog5424": (
        "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8\n"
        "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.\n"
        '<164>1 2003-10-11T22:14:16.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] disk 95% full\n'
        "<165>1 - host app - - - a line without a time\n",
        [
            ("2003-08-24T12:14:15.000Z", "INFO", "192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts."),
            ("2003-10-11T22:14:15.003Z", "ERROR", "mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8"),
            (
                "2003-10-11T22:14:16.003Z",
                "WARN",
                'mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] disk 95% full\n'
                "<165>1 - host app - - - a line without a time",
            ),
        ],
    ),
    # Envoy's stdout: application log and access log mixed
    "envoy": (
        "[2024-05-01 10:00:01.123][12][error][upstream] [source/common/upstream/cluster_manager_impl.cc:1200] no healthy host for HTTP connection pool\n"
        "[2024-05-01 10:00:02.456][12][warning][config] [source/common/config/grpc_stream.h:201] StreamAggregatedResources gRPC config stream closed: 14, upstream connect error\n"
        "[2024-05-01 10:00:03.789][1][info][main] [source/server/server.cc:915] starting main dispatch loop\n"
        '[2024-05-01T10:00:04.000Z] "GET /api/orders HTTP/1.1" 503 UH 0 19 0 - "10.0.0.1" "curl/8.5.0" "7c1b5f1e" "shop.local" "-"\n',
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", "[12][error][upstream] [source/common/upstream/cluster_manager_impl.cc:1200] no healthy host for HTTP connection pool"),
            ("2024-05-01T10:00:02.456Z", "WARN", "[12][warning][config] [source/common/config/grpc_stream.h:201] StreamAggregatedResources gRPC config stream closed: 14, upstream connect error"),
            ("2024-05-01T10:00:03.789Z", "INFO", "[1][info][main] [source/server/server.cc:915] starting main dispatch loop"),
            ("2024-05-01T10:00:04.000Z", "ERROR", '[2024-05-01T10:00:04.000Z] "GET /api/orders HTTP/1.1" 503 UH 0 19 0 - "10.0.0.1" "curl/8.5.0" "7c1b5f1e" "shop.local" "-"'),
        ],
    ),
    # Envoy's default access log: 5xx ERROR, 4xx (429 too) WARN
    "envoy_access": (
        '[2024-05-01T10:00:01.123Z] "GET /api/orders HTTP/1.1" 503 UF 0 91 3 - "10.0.0.1" "curl/8.5.0" "abc-123" "shop.local" "10.0.0.9:8080"\n'
        '[2024-05-01T10:00:02.123Z] "POST /api/orders HTTP/2" 429 - 120 18 1 1 "10.0.0.1" "okhttp/4.12" "abc-124" "shop.local" "10.0.0.9:8080"\n'
        '[2024-05-01T10:00:03.123Z] "GET /healthz HTTP/1.1" 200 - 0 2 0 0 "-" "kube-probe/1.29" "abc-125" "shop.local" "10.0.0.9:8080"\n',
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", '[2024-05-01T10:00:01.123Z] "GET /api/orders HTTP/1.1" 503 UF 0 91 3 - "10.0.0.1" "curl/8.5.0" "abc-123" "shop.local" "10.0.0.9:8080"'),
            ("2024-05-01T10:00:02.123Z", "WARN", '[2024-05-01T10:00:02.123Z] "POST /api/orders HTTP/2" 429 - 120 18 1 1 "10.0.0.1" "okhttp/4.12" "abc-124" "shop.local" "10.0.0.9:8080"'),
            ("2024-05-01T10:00:03.123Z", "INFO", '[2024-05-01T10:00:03.123Z] "GET /healthz HTTP/1.1" 200 - 0 2 0 0 "-" "kube-probe/1.29" "abc-125" "shop.local" "10.0.0.9:8080"'),
        ],
    ),
    # nginx/Apache combined format, with a zone offset
    "combined": (
        '10.0.0.1 - - [01/May/2024:10:00:01 +0000] "GET /api/cart HTTP/1.1" 502 157 "-" "Mozilla/5.0 (X11; Linux x86_64)"\n'
        '10.0.0.2 - frank [01/May/2024:12:00:02 +0200] "POST /login HTTP/1.1" 401 0 "https://shop/" "curl/8.5.0"\n'
        '10.0.0.3 - - [01/May/2024:10:00:03 +0000] "GET / HTTP/1.1" 200 612 "-" "Mozilla/5.0"\n'
        '10.0.0.4 - - [garbled] "GET / HTTP/1.1" 200 612\n',
        [
            ("2024-05-01T10:00:01.000Z", "ERROR", '10.0.0.1 - - [01/May/2024:10:00:01 +0000] "GET /api/cart HTTP/1.1" 502 157 "-" "Mozilla/5.0 (X11; Linux x86_64)"'),
            ("2024-05-01T10:00:02.000Z", "WARN", '10.0.0.2 - frank [01/May/2024:12:00:02 +0200] "POST /login HTTP/1.1" 401 0 "https://shop/" "curl/8.5.0"'),
            (
                "2024-05-01T10:00:03.000Z",
                "INFO",
                '10.0.0.3 - - [01/May/2024:10:00:03 +0000] "GET / HTTP/1.1" 200 612 "-" "Mozilla/5.0"\n'
                '10.0.0.4 - - [garbled] "GET / HTTP/1.1" 200 612',
            ),
        ],
    ),
    # nginx log_format escape=json with $time_iso8601 or $time_local, level by status
    "nginx_json": (
        '{"time":"2024-05-01T10:00:01+00:00","remote_addr":"10.0.0.1","request":"GET /api HTTP/1.1","status":503}\n'
        '{"time_local":"01/May/2024:10:00:02 +0000","remote_addr":"10.0.0.1","request":"GET /x HTTP/1.1","status":"404"}\n'
        '{"time":"2024-05-01T10:00:03+00:00","remote_addr":"10.0.0.1","request":"GET / HTTP/1.1","status":200}\n',
        [
            ("2024-05-01T10:00:01.000Z", "ERROR", '{"time":"2024-05-01T10:00:01+00:00","remote_addr":"10.0.0.1","request":"GET /api HTTP/1.1","status":503}'),
            ("2024-05-01T10:00:02.000Z", "WARN", '{"time_local":"01/May/2024:10:00:02 +0000","remote_addr":"10.0.0.1","request":"GET /x HTTP/1.1","status":"404"}'),
            ("2024-05-01T10:00:03.000Z", "INFO", '{"time":"2024-05-01T10:00:03+00:00","remote_addr":"10.0.0.1","request":"GET / HTTP/1.1","status":200}'),
        ],
    ),
    # journalctl -o short-iso: no level of its own, read from the message (klog, logfmt, error:)
    "journald_short_iso": (
        '2024-05-01T10:00:01+0000 node-1 kubelet[812]: E0501 10:00:01.123456     812 pod_workers.go:1298] "Error syncing pod, skipping"\n'
        '2024-05-01T10:00:02+0000 node-1 dockerd[90]: time="2024-05-01T10:00:02Z" level=warning msg="cleanup warnings"\n'
        "2024-05-01T10:00:03+0000 node-1 systemd[1]: Started Session 5 of user core.\n"
        "2024-05-01T10:00:04+0000 node-1 chronyd[612]: error: could not resolve 2.pool.ntp.org\n",
        [
            ("2024-05-01T10:00:01.000Z", "ERROR", 'node-1 kubelet[812]: E0501 10:00:01.123456     812 pod_workers.go:1298] "Error syncing pod, skipping"'),
            ("2024-05-01T10:00:02.000Z", "WARN", 'node-1 dockerd[90]: time="2024-05-01T10:00:02Z" level=warning msg="cleanup warnings"'),
            ("2024-05-01T10:00:03.000Z", "INFO", "node-1 systemd[1]: Started Session 5 of user core."),
            ("2024-05-01T10:00:04.000Z", "ERROR", "node-1 chronyd[612]: error: could not resolve 2.pool.ntp.org"),
        ],
    ),
    # journalctl -o json: __REALTIME_TIMESTAMP in microseconds, PRIORITY a syslog severity
    "journald_json": (
        '{"__REALTIME_TIMESTAMP":"1714557601123456","_HOSTNAME":"node-1","SYSLOG_IDENTIFIER":"coredns","PRIORITY":"3","MESSAGE":"plugin/errors: 2 shop.svc. A: read udp 10.0.0.4:53: i/o timeout"}\n'
        '{"__REALTIME_TIMESTAMP":"1714557602123456","_HOSTNAME":"node-1","SYSLOG_IDENTIFIER":"minio","PRIORITY":"4","MESSAGE":"disk usage above 90%"}\n'
        '{"__REALTIME_TIMESTAMP":"1714557603123456","_HOSTNAME":"node-1","SYSLOG_IDENTIFIER":"minio","PRIORITY":"6","MESSAGE":"healing completed"}\n',
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", "plugin/errors: 2 shop.svc. A: read udp 10.0.0.4:53: i/o timeout"),
            ("2024-05-01T10:00:02.123Z", "WARN", "disk usage above 90%"),
            ("2024-05-01T10:00:03.123Z", "INFO", "healing completed"),
        ],
    ),
    # klog (Kubernetes components): level letter, year-less
    "klog": (
        "E0501 10:00:01.123456    1234 controller.go:114] error syncing 'shop/cart': Operation cannot be fulfilled\n"
        "W0501 10:00:02.000001    1234 reflector.go:424] watch of *v1.Pod ended with: too old resource version\n"
        "I0501 10:00:03.000001    1234 leaderelection.go:248] attempting to acquire leader lease\n"
        "F0501 10:00:04.000001    1234 server.go:88] failed to listen on 0.0.0.0:10259\n",
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", "1234 controller.go:114] error syncing 'shop/cart': Operation cannot be fulfilled"),
            ("2024-05-01T10:00:02.000Z", "WARN", "1234 reflector.go:424] watch of *v1.Pod ended with: too old resource version"),
            ("2024-05-01T10:00:03.000Z", "INFO", "1234 leaderelection.go:248] attempting to acquire leader lease"),
            ("2024-05-01T10:00:04.000Z", "ERROR", "1234 server.go:88] failed to listen on 0.0.0.0:10259"),
        ],
    ),
    # logfmt: logrus's text formatter, slog's TextHandler, go-kit
    "logfmt": (
        'time="2024-05-01T10:00:01Z" level=error msg="db ping failed" err="dial tcp 10.0.0.2:5432: i/o timeout"\n'
        'time=2024-05-01T10:00:02.123Z level=WARN msg="slow query" ms=1200\n'
        'level=info ts=2024-05-01T10:00:03.123456Z caller=main.go:10 msg="started"\n',
        [
            ("2024-05-01T10:00:01.000Z", "ERROR", 'level=error msg="db ping failed" err="dial tcp 10.0.0.2:5432: i/o timeout"'),
            ("2024-05-01T10:00:02.123Z", "WARN", 'level=WARN msg="slow query" ms=1200'),
            ("2024-05-01T10:00:03.123Z", "INFO", 'level=info caller=main.go:10 msg="started"'),
        ],
    ),
    # zap's production encoder: epoch seconds, stacktrace on errors, dpanic
    "zap": (
        '{"level":"error","ts":1714557601.123,"caller":"server/handler.go:88","msg":"write failed","error":"broken pipe","stacktrace":"main.handle\\n\\t/app/server/handler.go:88"}\n'
        '{"level":"warn","ts":1714557602.123,"caller":"pool/pool.go:51","msg":"pool near capacity","in_use":95}\n'
        '{"level":"info","ts":1714557603.123,"caller":"main.go:30","msg":"serving"}\n'
        '{"level":"dpanic","ts":1714557604.123,"caller":"main.go:31","msg":"invariant broken"}\n',
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", "write failed\nmain.handle\n\t/app/server/handler.go:88"),
            ("2024-05-01T10:00:02.123Z", "WARN", "pool near capacity"),
            ("2024-05-01T10:00:03.123Z", "INFO", "serving"),
            ("2024-05-01T10:00:04.123Z", "ERROR", "invariant broken"),
        ],
    ),
    # slog's JSONHandler (levels like ERROR+2) and Serilog's compact JSON (@t, @l, @mt)
    "slog_clef": (
        '{"time":"2024-05-01T12:00:01.123+02:00","level":"ERROR+2","msg":"replication stopped"}\n'
        '{"@t":"2024-05-01T10:00:02.0000000Z","@l":"Warning","@mt":"Disk {Pct}% full","Pct":95}\n'
        '{"@t":"2024-05-01T10:00:03.0000000Z","@mt":"Started in {Ms} ms","Ms":120}\n',
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", "replication stopped"),
            ("2024-05-01T10:00:02.000Z", "WARN", "Disk {Pct}% full"),
            ("2024-05-01T10:00:03.000Z", "INFO", "Started in {Ms} ms"),
        ],
    ),
    # Go's log package (LstdFlags, Lmicroseconds); a panic's lines carry no timestamp
    "go_log": (
        "2024/05/01 10:00:01 http: TLS handshake error from 10.0.0.1:5555: EOF\n"
        "2024/05/01 10:00:02.123456 ERROR: cannot connect to broker\n"
        "2024/05/01 10:00:03 [WARN] queue depth 900\n"
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "goroutine 1 [running]:\n",
        [
            ("2024-05-01T10:00:01.000Z", "INFO", "http: TLS handshake error from 10.0.0.1:5555: EOF"),
            ("2024-05-01T10:00:02.123Z", "ERROR", "ERROR: cannot connect to broker"),
            ("2024-05-01T10:00:03.000Z", "WARN", "[WARN] queue depth 900\npanic: runtime error: invalid memory address or nil pointer dereference\ngoroutine 1 [running]:"),
        ],
    ),
    # Python logging: the cookbook's '%(asctime)s - %(name)s - %(levelname)s - %(message)s'
    "python": (
        "2024-05-01 10:00:01,123 - app.db - ERROR - connection lost\n"
        "Traceback (most recent call last):\n"
        '  File "/app/db.py", line 12, in query\n'
        "    cursor.execute(sql)\n"
        "psycopg2.OperationalError: server closed the connection unexpectedly\n"
        "2024-05-01 10:00:02,123 - app.pool - WARNING - retrying in 2s\n"
        "2024-05-01 10:00:03,123 INFO app: started\n",
        [
            (
                "2024-05-01T10:00:01.123Z",
                "ERROR",
                '- app.db - ERROR - connection lost\nTraceback (most recent call last):\n  File "/app/db.py", line 12, in query\n'
                "    cursor.execute(sql)\npsycopg2.OperationalError: server closed the connection unexpectedly",
            ),
            ("2024-05-01T10:00:02.123Z", "WARN", "- app.pool - WARNING - retrying in 2s"),
            ("2024-05-01T10:00:03.123Z", "INFO", "app: started"),
        ],
    ),
    # Log4j2 '%d{ISO8601} %-5level [%t] %c{1.} - %msg%n%throwable', Spring Boot's default
    "log4j2": (
        "2024-05-01T10:00:01,123 ERROR [http-nio-8080-exec-7] c.s.b.Payment - payment failed\n"
        "java.net.SocketTimeoutException: Read timed out\n"
        "\tat com.shop.billing.Payment.charge(Payment.java:42)\n"
        "Caused by: java.io.IOException: connection reset\n"
        "\t... 5 more\n"
        "2024-05-01 10:00:02.123  WARN 4242 --- [           main] o.s.b.a.j.HikariPool : HikariPool-1 - Connection is not available\n"
        "2024-05-01T10:00:03,123 INFO  [main] c.s.b.Application - Started Application in 4.2 seconds\n",
        [
            (
                "2024-05-01T10:00:01.123Z",
                "ERROR",
                "[http-nio-8080-exec-7] c.s.b.Payment - payment failed\njava.net.SocketTimeoutException: Read timed out\n"
                "\tat com.shop.billing.Payment.charge(Payment.java:42)\nCaused by: java.io.IOException: connection reset\n\t... 5 more",
            ),
            ("2024-05-01T10:00:02.123Z", "WARN", "4242 --- [           main] o.s.b.a.j.HikariPool : HikariPool-1 - Connection is not available"),
            ("2024-05-01T10:00:03.123Z", "INFO", "[main] c.s.b.Application - Started Application in 4.2 seconds"),
        ],
    ),
    # gunicorn's error log: '[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s'
    "gunicorn": (
        "[2024-05-01 10:00:01 +0000] [123] [ERROR] Exception in worker process\n"
        "Traceback (most recent call last):\n"
        '  File "/app/wsgi.py", line 3, in <module>\n'
        "[2024-05-01 10:00:02 +0000] [123] [WARNING] Worker graceful timeout (pid:9)\n"
        "[2024-05-01 10:00:03 +0000] [123] [INFO] Booting worker with pid: 9\n",
        [
            ("2024-05-01T10:00:01.000Z", "ERROR", '[123] [ERROR] Exception in worker process\nTraceback (most recent call last):\n  File "/app/wsgi.py", line 3, in <module>'),
            ("2024-05-01T10:00:02.000Z", "WARN", "[123] [WARNING] Worker graceful timeout (pid:9)"),
            ("2024-05-01T10:00:03.000Z", "INFO", "[123] [INFO] Booting worker with pid: 9"),
        ],
    ),
    # Kubernetes CRI container logs (/var/log/pods): the level from the application's line
    "cri": (
        '2024-05-01T10:00:01.123456789Z stderr F {"level":"error","msg":"upstream reset"}\n'
        "2024-05-01T10:00:02.123456789Z stderr F W0501 10:00:02.123456       1 lease.go:10] lease expired\n"
        "2024-05-01T10:00:03.123456789Z stdout F GET /healthz 200\n",
        [
            ("2024-05-01T10:00:01.123Z", "ERROR", '{"level":"error","msg":"upstream reset"}'),
            ("2024-05-01T10:00:02.123Z", "WARN", "W0501 10:00:02.123456       1 lease.go:10] lease expired"),
            ("2024-05-01T10:00:03.123Z", "INFO", "GET /healthz 200"),
        ],
    ),
}
# fmt: on
