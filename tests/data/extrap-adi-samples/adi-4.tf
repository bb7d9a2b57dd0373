tracefold-trace 2
world 4
lossy -
sites 12
site 0 app_adi_mp+0x11a8 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 1 app_adi_mp+0x15de libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 2 app_adi_mp+0x1616 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 3 app_adi_mp+0x1658 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 4 app_adi_mp+0x1b58 app_adi_mp+0x1668 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 5 app_adi_mp+0x1d92 app_adi_mp+0x1668 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 6 app_adi_mp+0x1b58 app_adi_mp+0x1673 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 7 app_adi_mp+0x1d92 app_adi_mp+0x1673 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 8 app_adi_mp+0x1b58 app_adi_mp+0x167e libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 9 app_adi_mp+0x1d92 app_adi_mp+0x167e libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 10 app_adi_mp+0x16c4 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 11 app_adi_mp+0x17af libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
modules 2
module app_adi_mp base=0x0 build-id=8757750fd6989381e65b6b6f85ea67b59dcfb5f9 path=/work/main/build/tests/apps/app_adi_mp
module libc.so.6 base=0x0 build-id=93ac61ec5a8eb1396f9fbd350e3169a558528a40 path=/usr/lib/x86_64-linux-gnu/libc.so.6
comms 1
comm 0 members *
nodes 12
node 0 MPI_Init site=0 ranks=*
  count 1 @ *
  time pred=start
    compute n=4 sum=0 min=0@0 max=0@0 bins=0:4:0:0:0
    comm n=4 sum=2065033021 min=429279415@0 max=570900485@2 bins=28:2:429279415:521725039:951004454,29:2:543128082:570900485:1114028567
node 1 MPI_Irecv site=1 ranks=*
  loop 0 members 10 @ *
  loop 0 iters 50 @ *
  loop 1 members 2*50 @ *
  loop 1 iters 6*50 @ *
  count 1*300 @ *
  field peer (1 1 2 2 3 3)*50 @ <1 0 2 2> ; (3 3 2 2 1 1)*50 @ <1 1 2 2>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 4500*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Init/0
    compute n=4 sum=323492 min=78226@1 max=84646@0 bins=16:4:78226:84646:323492
    comm n=4 sum=110153 min=11356@2 max=46890@1 bins=13:2:11356:13129:24485,15:2:38778:46890:85668
    stat compute_cpu n=4 sum=315400 min=76845@1 max=82143@0 bins=16:4:76845:82143:315400
  time pred=MPI_Isend/2
    compute n=1000 sum=9070442 min=8462@0 max=42664@2 span=2 bins=12:978:8462:14661:8535006,14:22:19549:42664:535436
    comm n=1000 sum=5690633 min=200@0 max=106238@2 span=16 bins=0:998:200:63996:5507962,16:2:76433:106238:182671
    stat compute_cpu n=1000 sum=7947176 min=7382@3 max=41060@2 span=2 bins=12:978:7382:13561:7438668,14:22:18418:41060:508508
  time pred=MPI_Allreduce/10
    compute n=196 sum=4480756 min=21652@3 max=27441@0 bins=14:196:21652:27441:4480756
    comm n=196 sum=1394295 min=431@3 max=35522@3 span=4 bins=8:91:431:3956:122850,12:105:4096:35522:1271445
    stat compute_cpu n=196 sum=4213804 min=20471@3 max=25748@2 bins=14:196:20471:25748:4213804
node 2 MPI_Isend site=2 ranks=*
  count 1*300 @ *
  field peer (1 1 2 2 3 3)*50 @ <1 0 2 2> ; (3 3 2 2 1 1)*50 @ <1 1 2 2>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 4500*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Irecv/1
    compute n=1200 sum=1512584 min=1082@0 max=2864@0 bins=10:1192:1082:2013:1493576,11:8:2103:2864:19008
    comm n=1200 sum=1594792 min=230@0 max=46990@0 span=8 bins=0:26:230:251:6370,8:1174:260:46990:1588422
    stat compute_cpu n=1200 sum=180220 min=40@1 max=1724@0 span=4 bins=4:1042:40:251:116704,8:158:260:1724:63516
node 3 MPI_Waitall site=3 ranks=*
  count 1*50 @ *
  field list links (12 12 10 8 6 4 2 11 9 7 5 3 1)*50 @ *
  time pred=MPI_Isend/2
    compute n=200 sum=276612 min=1122@0 max=3004@0 bins=10:196:1122:1893:265776,11:4:2233:3004:10836
    comm n=200 sum=1249418832 min=104916@0 max=67386368@3 span=8 bins=16:173:104916:16067901:384651141,24:27:18673174:67386368:864767691
    stat compute_cpu n=200 sum=60812 min=81@0 max=1912@2 span=4 bins=4:101:81:252:21311,8:99:260:1912:39501
node 4 MPI_Sendrecv site=4 ranks=*
  count 1*50 @ *
  field peer 1*50 @ <1 0 2 2> ; 3*50 @ <1 1 2 2>
  field rpeer 1*50 @ <1 0 2 2> ; 3*50 @ <1 1 2 2>
  field tag 10*50 @ *
  field count 4500*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field rcount 4500*50 @ *
  field rdtype 14*50 @ *
  field rdsize 8*50 @ *
  field comm 0*50 @ *
  field rtag 10*50 @ *
  time pred=MPI_Waitall/3
    compute n=200 sum=1410615 min=5708@0 max=12930@0 bins=12:165:5708:8072:1073985,13:35:8222:12930:336630
    comm n=200 sum=258673079 min=58266@1 max=30065052@1 span=16 bins=0:2:58266:63245:121511,16:198:67681:30065052:258551568
    stat compute_cpu n=200 sum=1140045 min=4548@0 max=10906@2 bins=12:193:4548:8083:1074238,13:7:8522:10906:65807
node 5 MPI_Sendrecv site=5 ranks=*
  count 1*50 @ *
  field peer 1*50 @ <1 0 2 2> ; 3*50 @ <1 1 2 2>
  field rpeer 1*50 @ <1 0 2 2> ; 3*50 @ <1 1 2 2>
  field tag 11*50 @ *
  field count 4500*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field rcount 4500*50 @ *
  field rdtype 14*50 @ *
  field rdsize 8*50 @ *
  field comm 0*50 @ *
  field rtag 11*50 @ *
  time pred=MPI_Sendrecv/4
    compute n=200 sum=4943444 min=22844@1 max=45818@0 bins=14:187:22844:27901:4439941,15:13:34421:45818:503503
    comm n=200 sum=443791270 min=41913@0 max=27630292@3 span=16 bins=0:13:41913:65467:680745,16:187:69133:27630292:443110525
    stat compute_cpu n=200 sum=4684204 min=21662@1 max=42413@0 bins=14:188:21662:31617:4237144,15:12:33541:42413:447060
node 6 MPI_Sendrecv site=6 ranks=*
  count 1*50 @ *
  field peer 2*50 @ *
  field rpeer 2*50 @ *
  field tag 20*50 @ *
  field count 4500*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field rcount 4500*50 @ *
  field rdtype 14*50 @ *
  field rdsize 8*50 @ *
  field comm 0*50 @ *
  field rtag 20*50 @ *
  time pred=MPI_Sendrecv/5
    compute n=200 sum=5453527 min=24086@2 max=82152@0 span=2 bins=14:198:24086:61601:5304816,16:2:66559:82152:148711
    comm n=200 sum=1077858480 min=100360@0 max=66892319@2 span=8 bins=16:172:100360:15826872:223876232,24:28:17818473:66892319:853982248
    stat compute_cpu n=200 sum=5192890 min=22925@0 max=80580@0 span=2 bins=14:199:22925:64997:5112310,16:1:80580:80580:80580
node 7 MPI_Sendrecv site=7 ranks=*
  count 1*50 @ *
  field peer 2*50 @ *
  field rpeer 2*50 @ *
  field tag 21*50 @ *
  field count 4500*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field rcount 4500*50 @ *
  field rdtype 14*50 @ *
  field rdsize 8*50 @ *
  field comm 0*50 @ *
  field rtag 21*50 @ *
  time pred=MPI_Sendrecv/6
    compute n=200 sum=5328228 min=21692@0 max=110815@3 span=2 bins=14:196:21692:64155:4932928,16:4:86368:110815:395300
    comm n=200 sum=813502861 min=99949@1 max=44274200@0 span=8 bins=16:179:99949:10777855:110367820,24:21:19949442:44274200:703135041
    stat compute_cpu n=200 sum=5054296 min=20521@0 max=109193@3 span=2 bins=14:196:20521:62784:4665976,16:4:84937:109193:388320
node 8 MPI_Sendrecv site=8 ranks=*
  count 1*50 @ *
  field peer 3*50 @ <1 0 2 2> ; 1*50 @ <1 1 2 2>
  field rpeer 3*50 @ <1 0 2 2> ; 1*50 @ <1 1 2 2>
  field tag 30*50 @ *
  field count 4500*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field rcount 4500*50 @ *
  field rdtype 14*50 @ *
  field rdsize 8*50 @ *
  field comm 0*50 @ *
  field rtag 30*50 @ *
  time pred=MPI_Sendrecv/7
    compute n=200 sum=5377254 min=22914@0 max=72047@0 span=2 bins=14:198:22914:65427:5234922,16:2:70285:72047:142332
    comm n=200 sum=559947879 min=80680@3 max=54279405@0 span=8 bins=16:187:80680:13951023:135591830,24:13:19941319:54279405:424356049
    stat compute_cpu n=200 sum=5112165 min=21723@1 max=69544@0 span=2 bins=14:198:21723:64106:4973958,16:2:68663:69544:138207
node 9 MPI_Sendrecv site=9 ranks=*
  count 1*50 @ *
  field peer 3*50 @ <1 0 2 2> ; 1*50 @ <1 1 2 2>
  field rpeer 3*50 @ <1 0 2 2> ; 1*50 @ <1 1 2 2>
  field tag 31*50 @ *
  field count 4500*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field rcount 4500*50 @ *
  field rdtype 14*50 @ *
  field rdsize 8*50 @ *
  field comm 0*50 @ *
  field rtag 31*50 @ *
  time pred=MPI_Sendrecv/8
    compute n=200 sum=5642669 min=25197@0 max=97154@1 span=2 bins=14:197:25197:44837:5384798,16:3:72858:97154:257871
    comm n=200 sum=587820032 min=94040@0 max=54241710@1 span=8 bins=16:184:94040:15275012:129352368,24:16:18646915:54241710:458467664
    stat compute_cpu n=200 sum=5382061 min=24066@0 max=95623@1 span=2 bins=14:197:24066:43645:5128501,16:3:71397:95623:253560
node 10 MPI_Allreduce site=10 ranks=*
  count 1*50 @ *
  field count 1*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field comm 0*50 @ *
  field redop 3*50 @ *
  time pred=MPI_Sendrecv/9
    compute n=200 sum=4578879 min=20891@2 max=49704@2 bins=14:187:20891:32248:4093056,15:13:33139:49704:485823
    comm n=200 sum=882142320 min=6099@0 max=56097809@3 span=16 bins=0:5:6099:15533:55725,16:195:87460:56097809:882086595
    stat compute_cpu n=200 sum=4313143 min=19769@2 max=48472@2 bins=14:189:19769:32289:3911544,15:11:33030:48472:401599
node 11 MPI_Finalize site=11 ranks=*
  count 1 @ *
  time pred=MPI_Allreduce/10
    compute n=4 sum=493764 min=91807@1 max=170724@0 bins=16:3:91807:130975:323040,17:1:170724:170724:170724
    comm n=4 sum=360 min=70@1 max=110@0 bins=6:4:70:110:360
    stat compute_cpu n=4 sum=452245 min=90255@1 max=134932@0 bins=16:3:90255:129643:317313,17:1:134932:134932:134932
end
