//! The world `gen` draws from: services with their queues, handlers and payloads, failures
//! with their stack frames, hosts, tenants, submitters and unknown members.

/// One producing service: where its tasks go and what its failures look like.
pub(super) struct Service {
    pub(super) queue: &'static str,
    pub(super) handler: &'static str,
    pub(super) source: &'static str,
    /// The class in the service's own code that sits at the top of its stack traces.
    pub(super) class: &'static str,
    /// The payload's leading members and the shape of one of its repeated items.
    pub(super) payload_head: &'static str,
    pub(super) payload_item: &'static str,
    /// Indexes into [`FAILURES`] that this service runs into.
    pub(super) failures: &'static [usize],
}

pub(super) const SERVICES: &[Service] = &[
    Service {
        queue: "billing.invoices",
        handler: "invoice.render",
        source: "billing-api",
        class: "com.acme.billing.InvoiceRenderer",
        payload_head: r#""invoice_id":{n},"customer":"c-{n4}","currency":"EUR""#,
        payload_item: r#"{"sku":"SKU-{n4}","qty":{d},"price_cents":{n}}"#,
        failures: &[0, 1, 3, 5, 8],
    },
    Service {
        queue: "orders.fulfilment",
        handler: "order.ship",
        source: "checkout-web",
        class: "com.acme.orders.ShipmentService",
        payload_head: r#""order_id":"o-{n}","warehouse":"fra-{d}","priority":false"#,
        payload_item: r#"{"line":{d},"ean":"40{n4}{n4}","qty":{d}}"#,
        failures: &[0, 2, 4, 6],
    },
    Service {
        queue: "notify.email",
        handler: "email.send",
        source: "notification-svc",
        class: "com.acme.notify.SmtpSender",
        payload_head: r#""template":"order-confirmation","to":"user{n}@example.com","locale":"de-DE""#,
        payload_item: r#"{"key":"var{d}","value":"Grüße aus Köln {n}"}"#,
        failures: &[1, 3, 7, 8],
    },
    Service {
        queue: "search.reindex",
        handler: "catalog.index-product",
        source: "catalog-sync",
        class: "com.acme.search.ProductIndexer",
        payload_head: r#""product_id":{n},"revision":{d},"full":true"#,
        payload_item: r#"{"field":"attr_{d}","boost":1.5,"tokens":["t{n4}","t{n4}"]}"#,
        failures: &[0, 4, 5, 6],
    },
    Service {
        queue: "payments.capture",
        handler: "payment.capture",
        source: "payments-gateway",
        class: "com.acme.payments.CaptureWorker",
        payload_head: r#""payment_id":"pay_{n}{n4}","amount_cents":{n},"currency":"USD""#,
        payload_item: r#"{"event":"auth","at":"2024-05-01T12:00:0{d}Z","ref":"{n}"}"#,
        failures: &[1, 2, 5, 7],
    },
    Service {
        queue: "media.thumbnails",
        handler: "image.resize",
        source: "media-upload",
        class: "com.acme.media.Thumbnailer",
        payload_head: r#""object":"uploads/{n4}/{n}.jpg","bucket":"media-eu-1""#,
        payload_item: r#"{"w":{n4},"h":{n4},"format":"webp","quality":8{d}}"#,
        failures: &[0, 3, 4, 6],
    },
];

/// A kind of failure: its exception type, a message template, whether retrying can help, and
/// the library frames between the service's code and the exception.
pub(super) struct Failure {
    pub(super) exception: &'static str,
    pub(super) message: &'static str,
    pub(super) retryable: bool,
    pub(super) frames: &'static [&'static str],
}

pub(super) const HTTP_FRAMES: &[&str] = &[
    "java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)",
    "java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099)",
    "org.apache.hc.core5.http.impl.io.SessionInputBufferImpl.fillBuffer(SessionInputBufferImpl.java:149)",
    "org.apache.hc.client5.http.impl.classic.InternalExecRuntime.execute(InternalExecRuntime.java:212)",
    "org.apache.hc.client5.http.impl.classic.CloseableHttpClient.execute(CloseableHttpClient.java:245)",
];

pub(super) const JDBC_FRAMES: &[&str] = &[
    "org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2713)",
    "org.postgresql.jdbc.PgPreparedStatement.executeUpdate(PgPreparedStatement.java:152)",
    "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeUpdate(HikariProxyPreparedStatement.java)",
    "org.springframework.jdbc.core.JdbcTemplate.update(JdbcTemplate.java:986)",
];

pub(super) const JSON_FRAMES: &[&str] = &[
    "com.fasterxml.jackson.databind.exc.MismatchedInputException.from(MismatchedInputException.java:59)",
    "com.fasterxml.jackson.databind.DeserializationContext.reportInputMismatch(DeserializationContext.java:1767)",
    "com.fasterxml.jackson.databind.ObjectMapper._readMapAndClose(ObjectMapper.java:4825)",
];

pub(super) const NO_FRAMES: &[&str] = &[];

pub(super) const FAILURES: &[Failure] = &[
    Failure {
        exception: "java.net.SocketTimeoutException",
        message: "Read timed out after {n4} ms calling {host}:8443",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "java.net.ConnectException",
        message: "Connection refused: {host}/10.0.{d}.{n4}:443",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "org.postgresql.util.PSQLException",
        message: "ERROR: deadlock detected\n  Detail: Process {n4} waits for ShareLock on transaction {n}; blocked by process {n4}.",
        retryable: true,
        frames: JDBC_FRAMES,
    },
    Failure {
        exception: "java.lang.IllegalStateException",
        message: "task {n} is in state \"ARCHIVED\", expected \"OPEN\"",
        retryable: false,
        frames: NO_FRAMES,
    },
    Failure {
        exception: "java.lang.NullPointerException",
        message: "Cannot invoke \"String.length()\" because \"customer.email\" is null",
        retryable: false,
        frames: NO_FRAMES,
    },
    Failure {
        exception: "com.fasterxml.jackson.databind.exc.MismatchedInputException",
        message: "Cannot deserialize value of type `long` from String \"n/a\": not a valid `long` value\n at [Source: (byte[])\"{\"id\":\"n/a\"}\"; line: 1, column: 7]",
        retryable: false,
        frames: JSON_FRAMES,
    },
    Failure {
        exception: "javax.net.ssl.SSLHandshakeException",
        message: "PKIX path building failed: unable to find valid certification path to requested target",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "com.acme.common.RateLimitedException",
        message: "429 Too Many Requests from {host}: retry after {d} s",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "com.acme.common.ValidationException",
        message: "field 'name' rejected: 'Zoë Müller – 東京' contains unsupported characters",
        retryable: false,
        frames: NO_FRAMES,
    },
];

pub(super) const HOSTS: &[&str] = &[
    "pdf-renderer",
    "smtp.eu-west-1.example.net",
    "inventory-api",
    "psp.example.com",
    "s3.eu-central-1.amazonaws.com",
];

pub(super) const WORKER_FRAMES: &[&str] = &[
    "dev.rdq.worker.HandlerInvoker.invoke(HandlerInvoker.java:88)",
    "dev.rdq.worker.LeaseLoop.runOne(LeaseLoop.java:141)",
    "java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)",
    "java.base/java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:635)",
    "java.base/java.lang.Thread.run(Thread.java:840)",
];

/// The methods of a service's own code, in its stack frames.
pub(super) const OWN_METHODS: &[&str] = &["handle", "process", "apply", "execute", "lambda$run$0"];

// The frames of a call through a Spring bean's proxy, innermost first, that `--stack-bytes`
// stacks are padded with: what makes real stacks of Spring services tens of KB long.

/// From the proxy's interceptor chain down to the target method, called by reflection.
pub(super) const PROXY_INVOKE_FRAMES: &[&str] = &[
    "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)",
    "java.base/java.lang.reflect.Method.invoke(Method.java:580)",
    "org.springframework.aop.support.AopUtils.invokeJoinpointUsingReflection(AopUtils.java:355)",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.invokeJoinpoint(ReflectiveMethodInvocation.java:196)",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:163)",
    "org.springframework.aop.framework.CglibAopProxy$CglibMethodInvocation.proceed(CglibAopProxy.java:765)",
];

/// The interceptors a proxy may stack between its entry and the target: transactions,
/// retries, circuit breakers, metrics, security.
pub(super) const INTERCEPTOR_FRAMES: &[&[&str]] = &[
    &[
        "org.springframework.transaction.interceptor.TransactionInterceptor$1.proceedWithInvocation(TransactionInterceptor.java:123)",
        "org.springframework.transaction.interceptor.TransactionAspectSupport.invokeWithinTransaction(TransactionAspectSupport.java:392)",
        "org.springframework.transaction.interceptor.TransactionInterceptor.invoke(TransactionInterceptor.java:119)",
    ],
    &[
        "io.github.resilience4j.retry.Retry.lambda$decorateCheckedSupplier$3(Retry.java:213)",
        "io.github.resilience4j.retry.Retry.executeCheckedSupplier(Retry.java:471)",
        "io.github.resilience4j.spring6.retry.configure.RetryAspect.proceed(RetryAspect.java:140)",
        "io.github.resilience4j.spring6.retry.configure.RetryAspect.retryAroundAdvice(RetryAspect.java:118)",
    ],
    &[
        "io.github.resilience4j.circuitbreaker.CircuitBreaker.lambda$decorateCheckedSupplier$0(CircuitBreaker.java:70)",
        "io.github.resilience4j.circuitbreaker.CircuitBreaker.executeCheckedSupplier(CircuitBreaker.java:753)",
        "io.github.resilience4j.spring6.circuitbreaker.configure.CircuitBreakerAspect.proceed(CircuitBreakerAspect.java:171)",
    ],
    &[
        "io.micrometer.observation.Observation.observeChecked(Observation.java:612)",
        "io.micrometer.observation.aop.ObservedAspect.observe(ObservedAspect.java:169)",
        "org.springframework.aop.aspectj.AbstractAspectJAdvice.invokeAdviceMethodWithGivenArgs(AbstractAspectJAdvice.java:637)",
        "org.springframework.aop.aspectj.AspectJAroundAdvice.invoke(AspectJAroundAdvice.java:71)",
    ],
    &[
        "org.springframework.security.access.intercept.aopalliance.MethodSecurityInterceptor.invoke(MethodSecurityInterceptor.java:61)",
        "org.springframework.security.authorization.method.AuthorizationManagerBeforeMethodInterceptor.invoke(AuthorizationManagerBeforeMethodInterceptor.java:198)",
    ],
];

/// Between an interceptor and the next one down the chain.
pub(super) const INTERCEPTOR_PROCEED: &str = "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:184)";

/// The proxy's entry, called by the generated subclass (`$$SpringCGLIB$$0`, below).
pub(super) const PROXY_ENTRY_FRAMES: &[&str] = &[
    "org.springframework.aop.interceptor.ExposeInvocationInterceptor.invoke(ExposeInvocationInterceptor.java:97)",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:184)",
    "org.springframework.aop.framework.CglibAopProxy$CglibMethodInvocation.proceed(CglibAopProxy.java:765)",
    "org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept(CglibAopProxy.java:717)",
];

pub(super) const TENANTS: &[&str] = &["acme-eu", "acme-us", "globex", "initech", "umbrella-labs"];
pub(super) const SUBMITTERS: &[&str] = &[
    "svc-billing",
    "ops@example.com",
    "cron/nightly",
    "svc-checkout",
];

/// Unknown members an exporter might add: numbers and escapes that must survive byte for byte.
pub(super) const UNKNOWN_MEMBERS: &[&str] = &[
    r#""batch":{n}"#,
    r#""ratio":0.3333333333333333"#,
    r#""checksum":123456789012345678901234567890"#,
    r#""epsilon":0.1e-7"#,
    r#""overflow":1e400"#,
    r#""zero":-0"#,
    r#""precise":0.1000000000000000055511151231257827"#,
    r#""note":"caf\u00e9 \ud83d\ude00 \/ tab\there""#,
    r#""tags":["dlq","replay",null,true]"#,
];
