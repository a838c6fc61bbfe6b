/*
 * assignor_input: building an assignor's input (members, their subscriptions
 * and owned partitions, the topics) and naming the strategies (see
 * assignor.h); the strategies themselves are in assignor.c.
 */
#include "assignor.h"

#include "assignor_internal.h"
#include "sim_assert.h"

#include <string.h>

static void
input_topic_free(gpointer data)
{
    InputTopic *topic = data;
    g_free(topic->name);
    g_free(topic);
}

static void
input_member_free(gpointer data)
{
    InputMember *member = data;
    for (guint i = 0; i < member->owned->len; i++)
        g_free(g_array_index(member->owned, InputOwned, i).topic);
    g_array_unref(member->owned);
    g_ptr_array_unref(member->topics);
    g_free(member->id);
    g_free(member);
}

AssignorInput *
assignor_input_new(void)
{
    AssignorInput *input = g_new0(AssignorInput, 1);
    input->topics = g_ptr_array_new_with_free_func(input_topic_free);
    input->topic_by_name = g_hash_table_new(g_str_hash, g_str_equal);
    input->members = g_ptr_array_new_with_free_func(input_member_free);
    input->member_by_id = g_hash_table_new(g_str_hash, g_str_equal);
    return input;
}

void
assignor_input_free(AssignorInput *input)
{
    if (input == NULL)
        return;
    g_hash_table_unref(input->member_by_id);
    g_ptr_array_unref(input->members);
    g_hash_table_unref(input->topic_by_name);
    g_ptr_array_unref(input->topics);
    g_free(input);
}

gboolean
assignor_input_add_topic(AssignorInput *input, const char *topic, guint32 partitions)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(topic != NULL);
    KSIM_ASSERT(partitions <= ASSIGNOR_PARTITIONS_MAX);
    if (g_hash_table_contains(input->topic_by_name, topic))
        return FALSE;
    KSIM_ASSERT(input->topics->len < ASSIGNOR_TOPICS_MAX);
    InputTopic *entry = g_new0(InputTopic, 1);
    entry->name = g_strdup(topic);
    entry->partitions = partitions;
    g_ptr_array_add(input->topics, entry);
    g_hash_table_insert(input->topic_by_name, entry->name, entry);
    return TRUE;
}

static gboolean
names_have_duplicate(const char *const *names, guint n)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < n; i++) {
        KSIM_ASSERT(names[i] != NULL);
        if (!g_hash_table_add(seen, (gpointer)names[i]))
            return TRUE;
    }
    return FALSE;
}

gboolean
assignor_input_add_member(AssignorInput *input, const char *member_id, const char *const *topics,
                          guint n_topics, gint32 generation)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(member_id != NULL);
    KSIM_ASSERT(topics != NULL || n_topics == 0);
    KSIM_ASSERT(generation >= ASSIGNOR_GENERATION_NONE);
    if (g_hash_table_contains(input->member_by_id, member_id))
        return FALSE;
    if (names_have_duplicate(topics, n_topics))
        return FALSE;
    KSIM_ASSERT(input->members->len < ASSIGNOR_MEMBERS_MAX);
    InputMember *member = g_new0(InputMember, 1);
    member->id = g_strdup(member_id);
    member->topics = g_ptr_array_new_full(n_topics, g_free);
    for (guint i = 0; i < n_topics; i++)
        g_ptr_array_add(member->topics, g_strdup(topics[i]));
    member->owned = g_array_new(FALSE, FALSE, sizeof(InputOwned));
    member->generation = generation;
    g_ptr_array_add(input->members, member);
    g_hash_table_insert(input->member_by_id, member->id, member);
    return TRUE;
}

gboolean
assignor_input_add_owned(AssignorInput *input, const char *member_id, const char *topic,
                         guint32 partition)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(topic != NULL);
    InputMember *member = g_hash_table_lookup(input->member_by_id, member_id);
    if (member == NULL)
        return FALSE;
    for (guint i = 0; i < member->owned->len; i++) {
        const InputOwned *owned = &g_array_index(member->owned, InputOwned, i);
        if (owned->partition == partition && strcmp(owned->topic, topic) == 0)
            return FALSE;
    }
    KSIM_ASSERT(member->owned->len < ASSIGNOR_PARTITIONS_MAX);
    InputOwned owned = {g_strdup(topic), partition};
    g_array_append_val(member->owned, owned);
    return TRUE;
}

guint
assignor_input_member_count(const AssignorInput *input)
{
    KSIM_ASSERT(input != NULL);
    return input->members->len;
}

gboolean
assignor_input_has_member(const AssignorInput *input, const char *member_id)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(member_id != NULL);
    return g_hash_table_contains(input->member_by_id, member_id);
}

guint
assignor_input_owned_count(const AssignorInput *input, const char *member_id)
{
    const InputMember *member = g_hash_table_lookup(input->member_by_id, member_id);
    KSIM_ASSERT(member != NULL);
    return member->owned->len;
}

const char *
assignor_input_owned_get(const AssignorInput *input, const char *member_id, guint i,
                         guint32 *partition)
{
    const InputMember *member = g_hash_table_lookup(input->member_by_id, member_id);
    KSIM_ASSERT(member != NULL);
    KSIM_ASSERT(i < member->owned->len);
    const InputOwned *owned = &g_array_index(member->owned, InputOwned, i);
    *partition = owned->partition;
    return owned->topic;
}

gboolean
assignor_strategy_parse(const char *name, AssignorStrategy *out)
{
    KSIM_ASSERT(name != NULL);
    KSIM_ASSERT(out != NULL);
    static const AssignorStrategy all[] = {ASSIGNOR_RANGE, ASSIGNOR_ROUNDROBIN, ASSIGNOR_STICKY,
                                           ASSIGNOR_COOPERATIVE_STICKY};
    for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
        if (strcmp(name, assignor_strategy_name(all[i])) == 0) {
            *out = all[i];
            return TRUE;
        }
    }
    return FALSE;
}

const char *
assignor_strategy_name(AssignorStrategy strategy)
{
    switch (strategy) {
    case ASSIGNOR_RANGE:
        return "range";
    case ASSIGNOR_ROUNDROBIN:
        return "roundrobin";
    case ASSIGNOR_STICKY:
        return "sticky";
    case ASSIGNOR_COOPERATIVE_STICKY:
        return "cooperative-sticky";
    }
    KSIM_ASSERT(!"unknown assignment strategy");
    return NULL;
}

gboolean
assignor_strategy_cooperative(AssignorStrategy strategy)
{
    return strategy == ASSIGNOR_COOPERATIVE_STICKY;
}
