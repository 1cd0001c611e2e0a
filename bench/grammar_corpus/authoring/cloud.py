"""Cloud and infrastructure: AWS, GCP, Azure, Kubernetes, Cloudflare, observability, identity."""
from dsl import *

TAGS = A(O("Key Value", Key=S(min=1, max=128), Value=S(max=256)), max=50)
K8S_NAME = S("DNS-1123 name.", pat="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max=63)
LABELS = MAP(S(max=63), "Label keys and values.")
METADATA = O("name", name=K8S_NAME, namespace=K8S_NAME, labels=LABELS, annotations=MAP(S()))

schema("aws_s3_put_object", O(
    "Bucket Key", Bucket=S(pat="^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"), Key=S(min=1, max=1024), Body=S("Object data (base64 for binary)."),
    ACL=E("private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control"),
    CacheControl=S(), ContentDisposition=S(), ContentEncoding=S(), ContentLanguage=S(), ContentLength=I(min=0), ContentMD5=S(),
    ContentType=S(pat="^[a-z]+/[a-z0-9.+-]+$"), ChecksumAlgorithm=E("CRC32", "CRC32C", "SHA1", "SHA256"), Expires=TS(),
    Metadata=MAP(S()), ServerSideEncryption=E("AES256", "aws:kms", "aws:kms:dsse"), SSEKMSKeyId=S(),
    StorageClass=E("STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER", "DEEP_ARCHIVE", "GLACIER_IR"),
    Tagging=S("URL-encoded key=value pairs."), ObjectLockMode=E("GOVERNANCE", "COMPLIANCE"), ObjectLockRetainUntilDate=TS()),
    title="AWS S3 PutObject request")

schema("aws_ec2_run_instances", O(
    "ImageId MinCount MaxCount", ImageId=S(pat="^ami-[0-9a-f]{8,17}$"), InstanceType=S(pat="^[a-z][a-z0-9]*\\.[a-z0-9]+$"),
    MinCount=I(min=1), MaxCount=I(min=1), KeyName=S(), SecurityGroupIds=A(S(pat="^sg-[0-9a-f]{8,17}$")), SubnetId=S(pat="^subnet-[0-9a-f]{8,17}$"),
    UserData=S(), IamInstanceProfile=O("", Arn=S(), Name=S()), EbsOptimized=B(), Monitoring=O("Enabled", Enabled=B()),
    BlockDeviceMappings=A(O("DeviceName", DeviceName=S(pat="^/dev/[a-z0-9]+$"), Ebs=O("", VolumeSize=I(min=1, max=16384), VolumeType=E("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"),
                                                                                 DeleteOnTermination=B(), Encrypted=B(), Iops=I(min=100)))),
    TagSpecifications=A(O("ResourceType Tags", ResourceType=E("instance", "volume", "network-interface"), Tags=TAGS)),
    MetadataOptions=O("", HttpTokens=E("optional", "required"), HttpEndpoint=E("enabled", "disabled"), HttpPutResponseHopLimit=I(min=1, max=64)),
    Placement=O("", AvailabilityZone=S(pat="^[a-z]{2}-[a-z]+-[0-9][a-z]$"), Tenancy=E("default", "dedicated", "host"))),
    title="AWS EC2 RunInstances")

schema("aws_lambda_create_function", O(
    "FunctionName Role Code", FunctionName=S(pat="^[a-zA-Z0-9-_]+$", min=1, max=64), Runtime=E("python3.12", "python3.11", "nodejs20.x", "nodejs18.x", "java21", "dotnet8", "ruby3.3", "provided.al2023"),
    Role=S(pat="^arn:aws:iam::[0-9]{12}:role/.+$"), Handler=S(max=128), Code=O("", ZipFile=S(), S3Bucket=S(), S3Key=S(), ImageUri=S()),
    Description=S(max=256), Timeout=I(min=1, max=900), MemorySize=I(min=128, max=10240), Publish=B(), PackageType=E("Zip", "Image"),
    Environment=O("", Variables=MAP(S())), Architectures=A(E("x86_64", "arm64"), min=1, max=1), Tags=MAP(S()),
    VpcConfig=O("", SubnetIds=A(S(), max=16), SecurityGroupIds=A(S(), max=5)), TracingConfig=O("", Mode=E("Active", "PassThrough")),
    EphemeralStorage=O("Size", Size=I(min=512, max=10240)), Layers=A(S(), max=5)),
    title="AWS Lambda CreateFunction")

DDB = {"attr": O("", S=S(), N=S(pat="^-?[0-9]+(\\.[0-9]+)?$"), BOOL=B(), NULL=B(), SS=A(S()), NS=A(S()),
                 L=A(R("attr")), M=MAP(R("attr")))}
schema("aws_dynamodb_put_item", O(
    "TableName Item", TableName=S(pat="^[a-zA-Z0-9_.-]{3,255}$"), Item=MAP(R("attr")), ConditionExpression=S(),
    ExpressionAttributeNames=MAP(S()), ExpressionAttributeValues=MAP(R("attr")),
    ReturnValues=E("NONE", "ALL_OLD"), ReturnConsumedCapacity=E("INDEXES", "TOTAL", "NONE")),
    title="AWS DynamoDB PutItem", d="Attribute values are recursive (lists and maps of values).", defs=DDB)

schema("aws_sqs_send_message", O(
    "QueueUrl MessageBody", QueueUrl=URL(), MessageBody=S(min=1, max=262144), DelaySeconds=I(min=0, max=900),
    MessageAttributes=MAP(O("DataType", DataType=E("String", "Number", "Binary"), StringValue=S(), BinaryValue=S())),
    MessageDeduplicationId=S(max=128), MessageGroupId=S(max=128)), title="AWS SQS SendMessage")

schema("aws_sns_publish", O(
    "Message", TopicArn=S(pat="^arn:aws:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$"), TargetArn=S(), PhoneNumber=S(), Message=S(max=262144),
    Subject=S(max=100), MessageStructure=C("json"), MessageAttributes=MAP(O("DataType", DataType=S(), StringValue=S())),
    MessageGroupId=S()), title="AWS SNS Publish")

schema("aws_iam_policy_document", O(
    "Version Statement", Version=E("2012-10-17", "2008-10-17"), Id=S(),
    Statement=A(O("Effect", Sid=S(pat="^[A-Za-z0-9]*$"), Effect=E("Allow", "Deny"),
                  Principal=ANY(C("*"), O("", AWS=ANY(S(), A(S())), Service=ANY(S(), A(S())), Federated=S())),
                  Action=ANY(S(pat="^([a-z0-9-]+:[A-Za-z0-9*]+|\\*)$"), A(S(), min=1)), NotAction=ANY(S(), A(S())),
                  Resource=ANY(S(), A(S(), min=1)), Condition=MAP(MAP(ANY(S(), A(S()))))), min=1)),
    title="AWS IAM policy document")

schema("aws_ecs_task_definition", O(
    "family containerDefinitions", family=S(pat="^[A-Za-z0-9_-]{1,255}$"), taskRoleArn=S(), executionRoleArn=S(),
    networkMode=E("bridge", "host", "awsvpc", "none"), requiresCompatibilities=A(E("EC2", "FARGATE", "EXTERNAL")),
    cpu=S(pat="^[0-9]+$"), memory=S(pat="^[0-9]+$"),
    containerDefinitions=A(O("name image", name=S(pat="^[A-Za-z0-9_-]{1,255}$"), image=S(), cpu=I(min=0), memory=I(min=4), memoryReservation=I(min=4),
                             essential=B(), command=A(S()), entryPoint=A(S()), workingDirectory=S(),
                             portMappings=A(O("containerPort", containerPort=I(min=1, max=65535), hostPort=I(min=0, max=65535), protocol=E("tcp", "udp"), name=S())),
                             environment=A(O("name value", name=S(), value=S())), secrets=A(O("name valueFrom", name=S(), valueFrom=S())),
                             logConfiguration=O("logDriver", logDriver=E("awslogs", "fluentd", "json-file", "splunk", "awsfirelens"), options=MAP(S())),
                             healthCheck=O("command", command=A(S(), min=1), interval=I(min=5, max=300), timeout=I(min=2, max=60), retries=I(min=1, max=10))), min=1, max=10),
    runtimePlatform=O("", cpuArchitecture=E("X86_64", "ARM64"), operatingSystemFamily=E("LINUX", "WINDOWS_SERVER_2022_CORE"))),
    title="AWS ECS RegisterTaskDefinition")

schema("aws_cloudwatch_put_metric_data", O(
    "Namespace MetricData", Namespace=S(pat="^[^:].*$", max=255),
    MetricData=A(O("MetricName", MetricName=S(max=255), Dimensions=A(O("Name Value", Name=S(max=255), Value=S(max=1024)), max=30),
                   Timestamp=TS(), Value=N(), Unit=E("Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Bits", "Percent", "Count", "Count/Second", "None"),
                   StorageResolution=E(1, 60)), min=1, max=1000)),
    title="AWS CloudWatch PutMetricData")

schema("aws_route53_change_batch", O(
    "Changes", Comment=S(max=256),
    Changes=A(O("Action ResourceRecordSet", Action=E("CREATE", "DELETE", "UPSERT"),
                ResourceRecordSet=O("Name Type", Name=S(max=1024), Type=E("A", "AAAA", "CAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"),
                                    TTL=I(min=0, max=2147483647), ResourceRecords=A(O("Value", Value=S(max=4000))),
                                    AliasTarget=O("HostedZoneId DNSName EvaluateTargetHealth", HostedZoneId=S(), DNSName=S(), EvaluateTargetHealth=B()),
                                    SetIdentifier=S(), Weight=I(min=0, max=255))), min=1)),
    title="AWS Route 53 ChangeResourceRecordSets batch")

schema("aws_eventbridge_event", O(
    "version id detail-type source account time region detail", {"detail-type": S()},
    version=C("0"), id=UUID(), source=S(pat="^[a-z0-9.]+$"), account=S(pat="^[0-9]{12}$"), time=TS(), region=S(pat="^[a-z]{2}-[a-z]+-[0-9]$"),
    resources=A(S()), detail=MAP(TYPES("string", "number", "boolean", "null", "object", "array"))),
    title="Amazon EventBridge event")

schema("aws_step_functions_start", O(
    "stateMachineArn", stateMachineArn=S(pat="^arn:aws:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[A-Za-z0-9_-]+$"),
    name=S(pat="^[A-Za-z0-9_-]{1,80}$"), input=S("JSON text of the input.", max=262144), traceHeader=S()),
    title="AWS Step Functions StartExecution")

schema("gcp_compute_instance_insert", O(
    "name machineType disks networkInterfaces", name=S(pat="^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"), description=S(),
    machineType=S(pat="^zones/[a-z0-9-]+/machineTypes/[a-z0-9-]+$"), canIpForward=B(), deletionProtection=B(),
    disks=A(O("boot", boot=B(), autoDelete=B(), type=E("PERSISTENT", "SCRATCH"), mode=E("READ_WRITE", "READ_ONLY"),
              initializeParams=O("", sourceImage=S(), diskSizeGb=S(pat="^[0-9]+$"), diskType=S())), min=1),
    networkInterfaces=A(O("", network=S(), subnetwork=S(), accessConfigs=A(O("type", type=C("ONE_TO_ONE_NAT"), name=S(), natIP=S(fmt="ipv4"))))),
    labels=MAP(S(pat="^[a-z0-9_-]{0,63}$")), tags=O("", items=A(S())), metadata=O("", items=A(O("key value", key=S(), value=S()))),
    serviceAccounts=A(O("email scopes", email=EMAIL(), scopes=A(URL()))),
    scheduling=O("", preemptible=B(), onHostMaintenance=E("MIGRATE", "TERMINATE"), automaticRestart=B(), provisioningModel=E("STANDARD", "SPOT"))),
    title="GCP Compute Engine instances.insert")

schema("gcp_pubsub_publish", O(
    "messages", messages=A(O("", data=S("Base64-encoded payload."), attributes=MAP(S()), orderingKey=S()), min=1, max=1000)),
    title="GCP Pub/Sub publish request")

schema("gcp_bigquery_table_schema", O(
    "fields", fields=A(R("field"), min=1)),
    title="BigQuery table schema", d="Field lists nest for RECORD columns.",
    defs={"field": O("name type", name=S(pat="^[A-Za-z_][A-Za-z0-9_]{0,299}$"),
                     type=E("STRING", "BYTES", "INTEGER", "INT64", "FLOAT", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOLEAN", "BOOL", "TIMESTAMP", "DATE", "TIME", "DATETIME", "GEOGRAPHY", "JSON", "RECORD", "STRUCT"),
                     mode=E("NULLABLE", "REQUIRED", "REPEATED"), description=S(max=1024), fields=A(R("field")),
                     maxLength=S(pat="^[0-9]+$"), precision=S(), scale=S())})

schema("gcp_cloud_run_service", O(
    "template", description=S(), labels=LABELS, ingress=E("INGRESS_TRAFFIC_ALL", "INGRESS_TRAFFIC_INTERNAL_ONLY", "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER"),
    template=O("containers", revision=S(), serviceAccount=EMAIL(), timeout=S(pat="^[0-9]+s$"), maxInstanceRequestConcurrency=I(min=1, max=1000),
               scaling=O("", minInstanceCount=I(min=0), maxInstanceCount=I(min=1)),
               containers=A(O("image", image=S(), command=A(S()), args=A(S()), env=A(O("name", name=S(), value=S())),
                              ports=A(O("containerPort", name=E("http1", "h2c"), containerPort=I(min=1, max=65535))),
                              resources=O("", limits=MAP(S()), cpuIdle=B(), startupCpuBoost=B())), min=1, max=10)),
    traffic=A(O("percent", type=E("TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST", "TRAFFIC_TARGET_ALLOCATION_TYPE_REVISION"), revision=S(), percent=I(min=0, max=100), tag=S()))),
    title="GCP Cloud Run v2 service")

schema("gcp_storage_object", O(
    "kind id name bucket", kind=C("storage#object"), id=S(), selfLink=URL(), name=S(), bucket=S(), generation=S(pat="^[0-9]+$"),
    metageneration=S(), contentType=S(), timeCreated=TS(), updated=TS(), storageClass=E("STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"),
    size=S(pat="^[0-9]+$"), md5Hash=S(), crc32c=S(), etag=S(), metadata=MAP(S())), title="GCP Cloud Storage object resource")

schema("azure_vm_create", O(
    "location properties", location=S(pat="^[a-z0-9]+$"), tags=MAP(S(max=256)),
    properties=O("hardwareProfile storageProfile osProfile networkProfile",
                 hardwareProfile=O("vmSize", vmSize=S(pat="^Standard_[A-Za-z0-9_]+$")),
                 storageProfile=O("imageReference", imageReference=O("publisher offer sku version", publisher=S(), offer=S(), sku=S(), version=S()),
                                  osDisk=O("createOption", createOption=E("FromImage", "Attach", "Empty"), caching=E("None", "ReadOnly", "ReadWrite"),
                                           managedDisk=O("", storageAccountType=E("Standard_LRS", "Premium_LRS", "StandardSSD_LRS", "UltraSSD_LRS")), diskSizeGB=I(min=1))),
                 osProfile=O("computerName adminUsername", computerName=S(max=64), adminUsername=S(), adminPassword=S(min=12, max=123),
                             linuxConfiguration=O("", disablePasswordAuthentication=B(),
                                                  ssh=O("", publicKeys=A(O("path keyData", path=S(), keyData=S())))) ),
                 networkProfile=O("networkInterfaces", networkInterfaces=A(O("id", id=S(), properties=O("", primary=B())), min=1)))),
    title="Azure Compute virtual machine create")

schema("azure_resource_group", O("location", location=S(), tags=MAP(S()), managedBy=S()), title="Azure resource group create")

schema("azure_devops_work_item_patch", A(O("op path", op=E("add", "remove", "replace", "test", "copy", "move"),
                                            path=S(pat="^(/fields/[A-Za-z.]+|/relations/-)$"), from_=OPT(S()),
                                            value=TYPES("string", "number", "boolean", "object")), min=1),
       title="Azure DevOps work item JSON Patch")

CONTAINER = O("name", name=K8S_NAME, image=S(), imagePullPolicy=E("Always", "IfNotPresent", "Never"), command=A(S()), args=A(S()),
              workingDir=S(), ports=A(O("containerPort", name=S(max=15), containerPort=I(min=1, max=65535), protocol=E("TCP", "UDP", "SCTP"))),
              env=A(O("name", name=S(pat="^[-._a-zA-Z][-._a-zA-Z0-9]*$"), value=S(),
                      valueFrom=O("", secretKeyRef=O("name key", name=S(), key=S(), optional=B()), configMapKeyRef=O("name key", name=S(), key=S()),
                                  fieldRef=O("fieldPath", fieldPath=S())))),
              resources=O("", limits=MAP(S(pat="^[0-9]+(\\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$")), requests=MAP(S(pat="^[0-9]+(\\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$"))),
              volumeMounts=A(O("name mountPath", name=S(), mountPath=S(), readOnly=B(), subPath=S())),
              livenessProbe=R("probe"), readinessProbe=R("probe"), startupProbe=R("probe"),
              securityContext=O("", runAsUser=I(min=0), runAsNonRoot=B(), readOnlyRootFilesystem=B(), allowPrivilegeEscalation=B(),
                                capabilities=O("", add=A(S()), drop=A(S()))))
PROBE = O("", httpGet=O("port", path=S(), port=ANY(I(min=1, max=65535), S()), scheme=E("HTTP", "HTTPS")),
          tcpSocket=O("port", port=ANY(I(min=1, max=65535), S())), exec=O("command", command=A(S())),
          initialDelaySeconds=I(min=0), periodSeconds=I(min=1), timeoutSeconds=I(min=1), failureThreshold=I(min=1), successThreshold=I(min=1))
K8S_DEFS = {"container": CONTAINER, "probe": PROBE}

schema("kubernetes_pod_spec_container", R("container"), title="Kubernetes container (core/v1)", defs=K8S_DEFS)

schema("kubernetes_deployment", O(
    "apiVersion kind metadata spec", apiVersion=C("apps/v1"), kind=C("Deployment"), metadata=METADATA,
    spec=O("selector template", replicas=I(min=0), revisionHistoryLimit=I(min=0),
           selector=O("matchLabels", matchLabels=LABELS),
           strategy=O("", type=E("RollingUpdate", "Recreate"), rollingUpdate=O("", maxSurge=ANY(I(min=0), S(pat="^[0-9]+%$")), maxUnavailable=ANY(I(min=0), S(pat="^[0-9]+%$")))),
           template=O("spec", metadata=O("", labels=LABELS, annotations=MAP(S())),
                      spec=O("containers", containers=A(R("container"), min=1), initContainers=A(R("container")), serviceAccountName=S(),
                             restartPolicy=E("Always", "OnFailure", "Never"), nodeSelector=MAP(S()), terminationGracePeriodSeconds=I(min=0),
                             volumes=A(O("name", name=S(), configMap=O("name", name=S()), secret=O("secretName", secretName=S()),
                                         emptyDir=O("", medium=S(), sizeLimit=S()), persistentVolumeClaim=O("claimName", claimName=S()))),
                             tolerations=A(O("", key=S(), operator=E("Exists", "Equal"), value=S(), effect=E("NoSchedule", "PreferNoSchedule", "NoExecute"))))))),
    title="Kubernetes Deployment (apps/v1)", defs=K8S_DEFS)

schema("kubernetes_service", O(
    "apiVersion kind metadata spec", apiVersion=C("v1"), kind=C("Service"), metadata=METADATA,
    spec=O("ports", type=E("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"), selector=LABELS, clusterIP=S(),
           ports=A(O("port", name=S(), protocol=E("TCP", "UDP", "SCTP"), port=I(min=1, max=65535), targetPort=ANY(I(min=1, max=65535), S()),
                     nodePort=I(min=30000, max=32767)), min=1),
           sessionAffinity=E("ClientIP", "None"), externalTrafficPolicy=E("Cluster", "Local"), loadBalancerSourceRanges=A(S()))),
    title="Kubernetes Service (v1)")

schema("kubernetes_configmap", O(
    "apiVersion kind metadata", apiVersion=C("v1"), kind=C("ConfigMap"), metadata=METADATA, data=MAP(S()), binaryData=MAP(S()), immutable=B()),
    title="Kubernetes ConfigMap")

schema("kubernetes_ingress", O(
    "apiVersion kind metadata spec", apiVersion=C("networking.k8s.io/v1"), kind=C("Ingress"), metadata=METADATA,
    spec=O("", ingressClassName=S(), tls=A(O("", hosts=A(S(fmt="hostname")), secretName=S())),
           rules=A(O("", host=S(fmt="hostname"), http=O("paths", paths=A(O("path pathType backend", path=S(pat="^/.*$"), pathType=E("Exact", "Prefix", "ImplementationSpecific"),
                                                                           backend=O("service", service=O("name port", name=S(), port=O("", number=I(min=1, max=65535), name=S())))), min=1)))))),
    title="Kubernetes Ingress")

schema("kubernetes_cronjob", O(
    "apiVersion kind metadata spec", apiVersion=C("batch/v1"), kind=C("CronJob"), metadata=METADATA,
    spec=O("schedule jobTemplate", schedule=S("Cron expression.", pat="^(\\S+\\s+){4}\\S+$"), timeZone=S(), concurrencyPolicy=E("Allow", "Forbid", "Replace"),
           suspend=B(), successfulJobsHistoryLimit=I(min=0), failedJobsHistoryLimit=I(min=0), startingDeadlineSeconds=I(min=0),
           jobTemplate=O("spec", spec=O("template", backoffLimit=I(min=0), activeDeadlineSeconds=I(min=1),
                                        template=O("spec", spec=O("containers restartPolicy", containers=A(R("container"), min=1), restartPolicy=E("OnFailure", "Never"))))))),
    title="Kubernetes CronJob", defs=K8S_DEFS)

schema("kubernetes_hpa", O(
    "apiVersion kind metadata spec", apiVersion=C("autoscaling/v2"), kind=C("HorizontalPodAutoscaler"), metadata=METADATA,
    spec=O("scaleTargetRef maxReplicas", scaleTargetRef=O("apiVersion kind name", apiVersion=S(), kind=S(), name=S()),
           minReplicas=I(min=1), maxReplicas=I(min=1),
           metrics=A(O("type", type=E("Resource", "Pods", "Object", "External", "ContainerResource"),
                       resource=O("name target", name=E("cpu", "memory"), target=O("type", type=E("Utilization", "Value", "AverageValue"),
                                                                                  averageUtilization=I(min=1, max=100), averageValue=S())))))),
    title="Kubernetes HorizontalPodAutoscaler v2")

schema("helm_chart_yaml", O(
    "apiVersion name version", apiVersion=E("v1", "v2"), name=S(pat="^[a-z0-9-]+$"), version=S(pat="^[0-9]+\\.[0-9]+\\.[0-9]+.*$"),
    kubeVersion=S(), description=S(), type=E("application", "library"), keywords=A(S()), home=URL(), sources=A(URL()),
    dependencies=A(O("name version", name=S(), version=S(), repository=S(), condition=S(), alias=S())),
    maintainers=A(O("name", name=S(), email=EMAIL(), url=URL())), icon=URL(), appVersion=S(), deprecated=B()),
    title="Helm Chart.yaml")

schema("terraform_variable", O(
    "name type", name=S(pat="^[a-zA-Z_][a-zA-Z0-9_-]*$"), type=E("string", "number", "bool", "list(string)", "map(string)", "object", "any"),
    description=S(), default=TYPES("string", "number", "boolean", "array", "object", "null"), sensitive=B(), nullable=B(),
    validation=A(O("condition error_message", condition=S(), error_message=S()))),
    title="Terraform input variable (as JSON)")

schema("cloudflare_dns_record", O(
    "type name content", type=E("A", "AAAA", "CNAME", "MX", "TXT", "NS", "SRV", "CAA", "PTR"), name=S(max=255), content=S(),
    ttl=I("1 means automatic.", min=1, max=86400), priority=I(min=0, max=65535), proxied=B(), comment=S(max=100),
    tags=A(S(pat="^[a-z0-9_-]+:.+$"))), title="Cloudflare create DNS record")

schema("cloudflare_worker_route", O("pattern", pattern=S(), script=S(pat="^[a-z0-9-]+$")), title="Cloudflare worker route")

schema("digitalocean_droplet_create", O(
    "name size image", name=S(pat="^[a-zA-Z0-9.-]+$"), region=S(pat="^[a-z]{3}[0-9]$"), size=S(pat="^[a-z0-9-]+$"),
    image=ANY(S(), I(min=1)), ssh_keys=A(ANY(I(min=1), S())), backups=B(), ipv6=B(), monitoring=B(), tags=A(S()),
    user_data=S(max=65536), vpc_uuid=UUID(), with_droplet_agent=B()), title="DigitalOcean create droplet")

schema("vercel_deployment_create", O(
    "name", name=S(), project=S(), target=E("production", "staging"), gitSource=O("type ref", type=E("github", "gitlab", "bitbucket"),
                                                                               ref=S(), repoId=ANY(S(), I()), sha=S()),
    files=A(O("file data", file=S(), data=S(), encoding=E("base64", "utf-8"))),
    projectSettings=O("", framework=OPT(S()), buildCommand=OPT(S()), outputDirectory=OPT(S()), installCommand=OPT(S()), rootDirectory=OPT(S())),
    meta=MAP(S(max=256))), title="Vercel create deployment")

schema("netlify_site_create", O(
    "", name=S(pat="^[a-z0-9-]+$"), custom_domain=S(fmt="hostname"), password=S(), force_ssl=B(),
    repo=O("", provider=E("github", "gitlab", "bitbucket"), repo=S(), branch=S(), cmd=S(), dir=S())),
    title="Netlify create site")

schema("fly_machine_create", O(
    "config", name=S(), region=S(pat="^[a-z]{3}$"),
    config=O("image", image=S(), env=MAP(S()), guest=O("", cpu_kind=E("shared", "performance"), cpus=I(min=1, max=16), memory_mb=I(min=256)),
             services=A(O("ports protocol internal_port", ports=A(O("port", port=I(min=1, max=65535), handlers=A(E("http", "tls", "proxy_proto")))),
                          protocol=E("tcp", "udp"), internal_port=I(min=1, max=65535), autostop=B(), autostart=B())),
             auto_destroy=B(), restart=O("", policy=E("no", "always", "on-failure"), max_retries=I(min=0)))),
    title="Fly.io create machine")

schema("heroku_app_create", O("", name=S(pat="^[a-z][a-z0-9-]{1,28}[a-z0-9]$"), region=E("us", "eu"), stack=E("heroku-22", "heroku-24", "container")),
       title="Heroku create app")

schema("prometheus_alert_rule", O(
    "alert expr", alert=S(pat="^[A-Za-z_:][A-Za-z0-9_:]*$"), expr=S(min=1), for_=S(pat="^[0-9]+[smhdwy]$"), keep_firing_for=S(pat="^[0-9]+[smhdwy]$"),
    labels=MAP(S()), annotations=O("", summary=S(), description=S(), runbook_url=URL(), addl=S())),
    title="Prometheus alerting rule")

schema("prometheus_query_result", O(
    "status data", status=E("success", "error"),
    data=O("resultType result", resultType=E("matrix", "vector", "scalar", "string"),
           result=A(O("metric", metric=MAP(S()), value=T(N(), S()), values=A(T(N(), S()))))),
    errorType=S(), error=S(), warnings=A(S())), title="Prometheus HTTP API query response")

schema("grafana_dashboard_panel", O(
    "type title gridPos", id=I(min=1), type=E("timeseries", "stat", "gauge", "table", "bargauge", "text", "heatmap", "logs", "piechart"),
    title=S(), description=S(), gridPos=O("h w x y", h=I(min=1), w=I(min=1, max=24), x=I(min=0, max=23), y=I(min=0)),
    datasource=O("", type=S(), uid=S()),
    targets=A(O("refId", refId=S(pat="^[A-Z]$"), expr=S(), legendFormat=S(), interval=S())),
    fieldConfig=O("", defaults=O("", unit=S(), decimals=I(min=0), min=N(), max=N(),
                                 thresholds=O("mode steps", mode=E("absolute", "percentage"), steps=A(O("color value", color=S(), value=OPT(N())))))),
    options=MAP(TYPES("string", "number", "boolean", "object", "array"))),
    title="Grafana dashboard panel")

schema("opentelemetry_span", O(
    "traceId spanId name kind startTimeUnixNano endTimeUnixNano", traceId=S(pat="^[0-9a-f]{32}$"), spanId=S(pat="^[0-9a-f]{16}$"),
    parentSpanId=S(pat="^([0-9a-f]{16})?$"), name=S(), kind=I("SPAN_KIND_UNSPECIFIED=0 ... CONSUMER=5.", min=0, max=5),
    startTimeUnixNano=S(pat="^[0-9]+$"), endTimeUnixNano=S(pat="^[0-9]+$"),
    attributes=A(R("kv")), events=A(O("timeUnixNano name", timeUnixNano=S(), name=S(), attributes=A(R("kv")))),
    links=A(O("traceId spanId", traceId=S(), spanId=S(), attributes=A(R("kv")))),
    status=O("", code=I(min=0, max=2), message=S())),
    title="OpenTelemetry OTLP span (JSON)",
    defs={"kv": O("key value", key=S(), value=R("any_value")),
          "any_value": O("", stringValue=S(), boolValue=B(), intValue=S(pat="^-?[0-9]+$"), doubleValue=N(),
                         arrayValue=O("values", values=A(R("any_value"))), kvlistValue=O("values", values=A(R("kv"))))})

schema("auth0_user_create", O(
    "connection", email=EMAIL(), phone_number=S(pat="^\\+[1-9][0-9]{7,14}$"), user_metadata=MAP(TYPES("string", "number", "boolean")),
    blocked=B(), email_verified=B(), phone_verified=B(), app_metadata=MAP(TYPES("string", "number", "boolean", "array")),
    given_name=S(max=150), family_name=S(max=150), name=S(max=300), nickname=S(max=300), picture=URL(), user_id=S(max=255),
    connection=S(), password=S(min=8), verify_email=B(), username=S(min=1, max=128)),
    title="Auth0 create user")

schema("okta_user_create", O(
    "profile", profile=O("firstName lastName email login", firstName=S(), lastName=S(), email=EMAIL(), login=S(), mobilePhone=OPT(S()),
                         department=S(), title=S(), employeeNumber=S(), addl=TYPES("string", "number", "boolean")),
    credentials=O("", password=O("value", value=S()), recovery_question=O("question answer", question=S(), answer=S())),
    groupIds=A(S(pat="^00g[a-zA-Z0-9]{17}$"))), title="Okta create user")

schema("scim_user", O(
    "schemas userName", schemas=A(S(), min=1), id=S(), externalId=S(), userName=S(),
    name=O("", formatted=S(), familyName=S(), givenName=S(), middleName=S(), honorificPrefix=S()), displayName=S(),
    emails=A(O("value", value=EMAIL(), type=E("work", "home", "other"), primary=B())),
    phoneNumbers=A(O("value", value=S(), type=E("work", "home", "mobile", "fax", "other"))), active=B(), locale=S(), timezone=S(),
    groups=A(O("value", value=S(), display=S())), meta=O("", resourceType=S(), created=TS(), lastModified=TS(), location=URL())),
    title="SCIM 2.0 User")

schema("firebase_fcm_message", O(
    "message", validate_only=B(),
    message=O("", token=S(), topic=S(pat="^[a-zA-Z0-9-_.~%]+$"), condition=S(), data=MAP(S()),
              notification=O("", title=S(), body=S(), image=URL()),
              android=O("", priority=E("NORMAL", "HIGH"), ttl=S(pat="^[0-9]+(\\.[0-9]+)?s$"), collapse_key=S(),
                        notification=O("", icon=S(), color=S(pat="^#[0-9a-fA-F]{6}$"), sound=S(), click_action=S(), channel_id=S())),
              apns=O("", headers=MAP(S()), payload=O("aps", aps=O("", badge=I(min=0), sound=S(), content_available=I(min=0, max=1), category=S()))),
              webpush=O("", headers=MAP(S()), fcm_options=O("", link=URL())))),
    title="Firebase Cloud Messaging v1 send")

schema("github_actions_workflow_job", O(
    "runs-on steps", {"runs-on": ANY(S(), A(S(), min=1)), "timeout-minutes": I(min=1, max=360), "continue-on-error": B()},
    name=S(), needs=ANY(S(), A(S())), if_=S(), env=MAP(TYPES("string", "number", "boolean")),
    strategy=O("matrix", {"fail-fast": B(), "max-parallel": I(min=1)}, matrix=MAP(A(TYPES("string", "number", "boolean")))),
    steps=A(O("", {"working-directory": S(), "continue-on-error": B()}, name=S(), id=S(), uses=S(), run=S(), shell=S(), with_=MAP(TYPES("string", "number", "boolean")),
              env=MAP(S()), if_=S()), min=1)),
    title="GitHub Actions workflow job")
