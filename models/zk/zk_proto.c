/*
 * zk_proto: the names of errors and events, and the wire messages between
 * coordination clients and the server — their constructors, sizes, and the
 * free and clone functions the network calls (see zk_proto.h).
 */
#include "zk_proto.h"

#include "sim_assert.h"

#include <string.h>

#include "zk_server_internal.h"

/* ---- error and event names ---- */

const char *
zk_error_name(ZkError error)
{
    switch (error) {
    case ZK_OK:
        return "OK";
    case ZK_SYSTEM_ERROR:
        return "SYSTEMERROR";
    case ZK_RUNTIME_INCONSISTENCY:
        return "RUNTIMEINCONSISTENCY";
    case ZK_CONNECTION_LOSS:
        return "CONNECTIONLOSS";
    case ZK_BAD_ARGUMENTS:
        return "BADARGUMENTS";
    case ZK_NO_NODE:
        return "NONODE";
    case ZK_BAD_VERSION:
        return "BADVERSION";
    case ZK_NO_CHILDREN_FOR_EPHEMERALS:
        return "NOCHILDRENFOREPHEMERALS";
    case ZK_NODE_EXISTS:
        return "NODEEXISTS";
    case ZK_NOT_EMPTY:
        return "NOTEMPTY";
    case ZK_SESSION_EXPIRED:
        return "SESSIONEXPIRED";
    case ZK_SESSION_MOVED:
        return "SESSIONMOVED";
    }
    return "UNKNOWN";
}

const char *
zk_event_name(ZkEventType type)
{
    switch (type) {
    case ZK_EVENT_NODE_CREATED:
        return "NodeCreated";
    case ZK_EVENT_NODE_DELETED:
        return "NodeDeleted";
    case ZK_EVENT_NODE_DATA_CHANGED:
        return "NodeDataChanged";
    case ZK_EVENT_NODE_CHILDREN_CHANGED:
        return "NodeChildrenChanged";
    }
    return "Unknown";
}

const char *
zk_msg_type_name(guint type)
{
    switch (type) {
    case ZK_MSG_CONNECT:
        return "ZooKeeper connect";
    case ZK_MSG_CONNECT_REPLY:
        return "ZooKeeper connect reply";
    case ZK_MSG_REQUEST:
        return "ZooKeeper request";
    case ZK_MSG_REPLY:
        return "ZooKeeper reply";
    case ZK_MSG_WATCH_EVENT:
        return "ZooKeeper watch event";
    case ZK_MSG_PROBE:
        return "ZooKeeper probe";
    }
    return NULL;
}

/* ---- wire messages ---- */

ZkConnectMsg *
zk_msg_connect_new(guint64 session_id, gint64 timeout_ns, guint64 last_zxid, guint32 attempt)
{
    ZkConnectMsg *msg = g_new0(ZkConnectMsg, 1);
    msg->base.type = ZK_MSG_CONNECT;
    msg->base.size_bytes = 48; /* ZooKeeper's ConnectRequest with a 16-byte password */
    msg->base.size_of = sizeof *msg;
    msg->session_id = session_id;
    msg->timeout_ns = timeout_ns;
    msg->last_zxid = last_zxid;
    msg->attempt = attempt;
    return msg;
}

ZkConnectReplyMsg *
zk_msg_connect_reply_new(guint64 session_id, gint64 timeout_ns, guint32 attempt,
                            ZkError error)
{
    ZkConnectReplyMsg *msg = g_new0(ZkConnectReplyMsg, 1);
    msg->base.type = ZK_MSG_CONNECT_REPLY;
    msg->base.size_bytes = 40;
    msg->base.size_of = sizeof *msg;
    msg->session_id = session_id;
    msg->timeout_ns = timeout_ns;
    msg->attempt = attempt;
    msg->error = error;
    return msg;
}

SimMsg *
zk_msg_probe_new(void)
{
    SimMsg *msg = g_new0(SimMsg, 1);
    msg->type = ZK_MSG_PROBE;
    msg->size_bytes = 40; /* a TCP/IP header */
    msg->size_of = sizeof *msg;
    return msg;
}

gsize
zk_proto_bytes_size(GBytes *bytes)
{
    return bytes == NULL ? 0 : g_bytes_get_size(bytes);
}

void
zk_proto_wire_op_clear(ZkWireOp *op)
{
    g_free(op->path);
    if (op->data != NULL)
        g_bytes_unref(op->data);
}

static void
request_free(SimMsg *msg)
{
    ZkRequestMsg *req = (ZkRequestMsg *)msg;
    for (guint i = 0; i < req->n_ops; i++)
        zk_proto_wire_op_clear(&req->ops[i]);
    g_free(req->ops);
    g_free(req);
}

static SimMsg *
request_clone(const SimMsg *msg)
{
    const ZkRequestMsg *req = (const ZkRequestMsg *)msg;
    ZkRequestMsg *copy = g_memdup2(req, sizeof *req);
    copy->ops = g_new0(ZkWireOp, MAX(req->n_ops, 1));
    for (guint i = 0; i < req->n_ops; i++) {
        copy->ops[i] = req->ops[i];
        copy->ops[i].path = g_strdup(req->ops[i].path);
        copy->ops[i].data = req->ops[i].data == NULL ? NULL : g_bytes_ref(req->ops[i].data);
    }
    return &copy->base;
}

ZkRequestMsg *
zk_msg_request_new(ZkOpType type, guint n_ops)
{
    KSIM_ASSERT(n_ops <= OPS_MAX);
    ZkRequestMsg *req = g_new0(ZkRequestMsg, 1);
    req->base.type = ZK_MSG_REQUEST;
    req->base.free_fn = request_free;
    req->base.clone_fn = request_clone;
    req->type = type;
    req->n_ops = n_ops;
    req->ops = g_new0(ZkWireOp, MAX(n_ops, 1));
    return req;
}

void
zk_msg_request_finish(ZkRequestMsg *req)
{
    gsize size = 24; /* length, xid, type, session */
    for (guint i = 0; i < req->n_ops; i++) {
        const ZkWireOp *op = &req->ops[i];
        size += 16 + (op->path == NULL ? 0 : strlen(op->path)) + zk_proto_bytes_size(op->data);
    }
    KSIM_ASSERT(size <= G_MAXUINT32);
    req->base.size_bytes = (guint32)size;
}

void
zk_proto_wire_result_clear(ZkWireResult *result)
{
    g_free(result->path);
    if (result->data != NULL)
        g_bytes_unref(result->data);
    g_strfreev(result->children);
    memset(result, 0, sizeof *result);
}

static void
reply_free(SimMsg *msg)
{
    ZkReplyMsg *reply = (ZkReplyMsg *)msg;
    for (guint i = 0; i < reply->n_results; i++)
        zk_proto_wire_result_clear(&reply->results[i]);
    g_free(reply->results);
    g_free(reply);
}

static SimMsg *
reply_clone(const SimMsg *msg)
{
    const ZkReplyMsg *reply = (const ZkReplyMsg *)msg;
    ZkReplyMsg *copy = g_memdup2(reply, sizeof *reply);
    copy->results = g_new0(ZkWireResult, MAX(reply->n_results, 1));
    for (guint i = 0; i < reply->n_results; i++) {
        const ZkWireResult *from = &reply->results[i];
        ZkWireResult *to = &copy->results[i];
        *to = *from;
        to->path = g_strdup(from->path);
        to->data = from->data == NULL ? NULL : g_bytes_ref(from->data);
        to->children = g_strdupv(from->children);
    }
    return &copy->base;
}

ZkReplyMsg *
zk_msg_reply_new(guint64 session_id, gint64 xid, guint n_results)
{
    KSIM_ASSERT(n_results <= OPS_MAX);
    ZkReplyMsg *reply = g_new0(ZkReplyMsg, 1);
    reply->base.type = ZK_MSG_REPLY;
    reply->base.free_fn = reply_free;
    reply->base.clone_fn = reply_clone;
    reply->session_id = session_id;
    reply->xid = xid;
    reply->n_results = n_results;
    reply->results = g_new0(ZkWireResult, MAX(n_results, 1));
    return reply;
}

void
zk_msg_reply_finish(ZkReplyMsg *reply)
{
    gsize size = 16; /* xid, zxid, error */
    for (guint i = 0; i < reply->n_results; i++) {
        const ZkWireResult *result = &reply->results[i];
        size += 4 + 68; /* error + stat */
        size += result->path == NULL ? 0 : 4 + strlen(result->path);
        size += result->data == NULL ? 0 : 4 + g_bytes_get_size(result->data);
        for (char **child = result->children; child != NULL && *child != NULL; child++)
            size += 4 + strlen(*child);
    }
    KSIM_ASSERT(size <= G_MAXUINT32);
    reply->base.size_bytes = (guint32)size;
}

static void
watch_event_free(SimMsg *msg)
{
    ZkWatchEventMsg *event = (ZkWatchEventMsg *)msg;
    g_free(event->path);
    g_free(event);
}

static SimMsg *
watch_event_clone(const SimMsg *msg)
{
    const ZkWatchEventMsg *event = (const ZkWatchEventMsg *)msg;
    ZkWatchEventMsg *copy = g_memdup2(event, sizeof *event);
    copy->path = g_strdup(event->path);
    return &copy->base;
}

ZkWatchEventMsg *
zk_msg_watch_event_new(guint64 session_id, ZkEventType type, const char *path)
{
    KSIM_ASSERT(path != NULL);
    ZkWatchEventMsg *event = g_new0(ZkWatchEventMsg, 1);
    event->base.type = ZK_MSG_WATCH_EVENT;
    event->base.size_bytes = (guint32)(20 + strlen(path));
    event->base.free_fn = watch_event_free;
    event->base.clone_fn = watch_event_clone;
    event->session_id = session_id;
    event->type = type;
    event->path = g_strdup(path);
    return event;
}
