# The floors' arrows, checked by compiling: each probe is a one-line file that
# includes one header and is compiled with exactly what a file of one floor
# sees (that floor's library's include folders). A header from above the
# floor, or from a sibling, must not be found; a header from below must be.
# The probes are built only by these tests (EXCLUDE_FROM_ALL), one at a time
# (they share the build tree).
#
# Each entry: library, header, and whether the include is allowed.
set(KSIM_FLOOR_PROBES
  "ksim_sim plog.h no"               # the engine knows no Kafka
  "ksim_log broker.h no"             # the log knows no broker
  "ksim_log kafka_proto.h no"
  "ksim_zk kafka_proto.h no"         # ZooKeeper knows no Kafka
  "ksim_zk plog.h no"
  "ksim_history broker.h no"
  "ksim_proto broker.h no"           # the wire knows neither end
  "ksim_proto producer.h no"
  "ksim_raft broker.h no"            # the quorum knows no broker
  "ksim_raft zk_client.h no"         # nor ZooKeeper
  "ksim_raft plog.h yes"             # its metadata log is a partition log
  "ksim_kraft broker.h no"           # the KRaft controller knows brokers only by their requests
  "ksim_kraft zk_client.h no"
  "ksim_kraft raft_node.h yes"       # it runs on a quorum voter
  "ksim_broker producer.h no"        # brokers and clients meet only in wire messages
  "ksim_broker consumer.h no"
  "ksim_client broker.h no"
  "ksim_client zk_client.h no"
  "ksim_broker scenario.h no"        # no model knows the scenario format
  "ksim_cluster scenario.h no"
  "ksim_cluster runner.h no"
  "ksim_reports broker.h no"         # reports read histories, not live model state
  "ksim_reports cluster.h no"
  "ksim_broker plog.h yes"           # and downward includes are found
  "ksim_broker zk_client.h yes"
  "ksim_client kafka_proto.h yes"
  "ksim_cluster broker.h yes"
  "ksim_cluster raft_node.h yes"
  "ksim_harness cluster.h yes"
  "ksim_harness producer.h yes"
  "ksim_reports history.h yes"
  "ksim_reports scenario.h no"       # the checker knows no scenario format
  "ksim_harness metrics.h yes")      # [expect] validates against the checker's metric table

foreach(probe ${KSIM_FLOOR_PROBES})
  separate_arguments(fields UNIX_COMMAND "${probe}")
  list(GET fields 0 floor)
  list(GET fields 1 header)
  list(GET fields 2 allowed)
  string(REPLACE "." "_" header_id ${header})
  set(probe_name floor_probe_${floor}_${header_id})
  set(probe_source ${CMAKE_CURRENT_BINARY_DIR}/floors/${probe_name}.c)
  file(WRITE ${probe_source} "#include \"${header}\"\nint ${probe_name}(void);\nint ${probe_name}(void) { return 0; }\n")
  add_library(${probe_name} OBJECT EXCLUDE_FROM_ALL ${probe_source})
  target_link_libraries(${probe_name} PRIVATE ${floor})
  add_test(NAME floors_${floor}_${header_id}_${allowed}
           COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${probe_name})
  set_tests_properties(floors_${floor}_${header_id}_${allowed} PROPERTIES
                       LABELS floors RESOURCE_LOCK build_tree)
  if(allowed STREQUAL "no")
    # Passes only on the compiler's "not found" for this very header, so a
    # probe that fails for another reason does not pass.
    string(REPLACE "." "\\." header_re ${header})
    set_tests_properties(floors_${floor}_${header_id}_${allowed} PROPERTIES
                         PASS_REGULAR_EXPRESSION "${header_re}: No such file or directory")
  endif()
endforeach()
